#ifndef CTLS_SHIM_H
#define CTLS_SHIM_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

/* Function wrappers for libssl's macros, which Swift cannot call. */

static inline int CTLS_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}

static inline int CTLS_SSL_CTX_add1_chain_cert(SSL_CTX *context, X509 *certificate) {
    return (int)SSL_CTX_add1_chain_cert(context, certificate);
}

static inline int CTLS_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* What every context refuses: renegotiation (TLS 1.2), which lets one peer make the other redo handshakes at will. */
static inline uint64_t CTLS_refused_options(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

static inline int CTLS_refuses_options(SSL_CTX *context) {
    return (SSL_CTX_get_options(context) & CTLS_refused_options()) == CTLS_refused_options();
}

/* An empty memory BIO asks to be retried rather than reporting the end of input. */
static inline void CTLS_BIO_set_mem_eof_return(BIO *bio, int value) {
    (void)BIO_set_mem_eof_return(bio, value);
}

static inline size_t CTLS_BIO_pending(BIO *bio) {
    return BIO_ctrl_pending(bio);
}

#endif
