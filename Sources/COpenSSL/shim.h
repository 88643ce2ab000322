#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

/* Function wrappers for OpenSSL macros, which Swift cannot call. */

static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **contents) {
    return BIO_get_mem_data(bio, contents);
}

static inline void COpenSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/* RFC 2253 name printing, but UTF-8 left readable instead of escaped as \XX. */
static inline unsigned long COpenSSL_XN_FLAG_RFC2253_UTF8(void) {
    return XN_FLAG_RFC2253 & ~(unsigned long)ASN1_STRFLGS_ESC_MSB;
}

static inline STACK_OF(X509) *COpenSSL_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

static inline int COpenSSL_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

static inline int COpenSSL_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

static inline X509 *COpenSSL_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

/* Frees the stack only; the certificates it points to are not released. */
static inline void COpenSSL_sk_X509_free(STACK_OF(X509) *stack) {
    sk_X509_free(stack);
}

#endif
