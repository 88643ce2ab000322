#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <string.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
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

/* EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen. */
static inline EVP_PKEY *COpenSSL_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
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

/*
 * RSA keys without OpenSSL 3's decoder framework, which costs about 0.4 ms a private key and 0.1 ms a public
 * key (most of a `forge make` process's start-up): the legacy RSA-specific parsers take microseconds. Both
 * read one DER structure at *cursor, advance it past what they read like any d2i function, and return NULL
 * (with *cursor unchanged) for anything that is not a plain rsaEncryption key, so the caller can fall back
 * to the generic decoder and its error text.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static inline EVP_PKEY *COpenSSL_wrap_RSA(RSA *rsa) {
    EVP_PKEY *key = rsa ? EVP_PKEY_new() : NULL;
    if (key == NULL || EVP_PKEY_assign_RSA(key, rsa) != 1) {
        EVP_PKEY_free(key);
        RSA_free(rsa);
        return NULL;
    }
    return key;
}

/*
 * PKCS#8 PrivateKeyInfo with rsaEncryption, or a PKCS#1 RSAPrivateKey, with RSA blinding off: blinding hides
 * a secret key from timing attacks, and these keys are public TEST keys, while its set-up (seeding the
 * random generator) costs the first signature of a process about 2 ms. PKCS#1 v1.5 signatures do not
 * depend on it: same key, same digest, same bytes.
 */
static inline EVP_PKEY *COpenSSL_d2i_RSA_private_key(const unsigned char **cursor, long length) {
    const unsigned char *start = *cursor, *after = *cursor;
    RSA *rsa = NULL;
    PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &after, length);
    if (info != NULL) {
        const ASN1_OBJECT *algorithm = NULL;
        const unsigned char *inner = NULL;
        int innerLength = 0;
        if (PKCS8_pkey_get0(&algorithm, &inner, &innerLength, NULL, info) == 1 && OBJ_obj2nid(algorithm) == NID_rsaEncryption) {
            const unsigned char *innerCursor = inner;
            rsa = d2i_RSAPrivateKey(NULL, &innerCursor, innerLength);
            if (rsa != NULL && innerCursor != inner + innerLength) {
                RSA_free(rsa);
                rsa = NULL;
            }
        }
        PKCS8_PRIV_KEY_INFO_free(info);
    } else {
        after = start;
        rsa = d2i_RSAPrivateKey(NULL, &after, length);
    }
    if (rsa != NULL) RSA_set_flags(rsa, RSA_FLAG_NO_BLINDING);
    EVP_PKEY *key = COpenSSL_wrap_RSA(rsa);
    ERR_clear_error();
    if (key != NULL) *cursor = after;
    return key;
}

/*
 * SubjectPublicKeyInfo with rsaEncryption. The AlgorithmIdentifier is matched as bytes (rsaEncryption with NULL
 * parameters, the only encoding RFC 3279 allows) before d2i_RSA_PUBKEY, which would also take an RSA-PSS key and
 * make it plain RSA; d2i_X509_PUBKEY would check the OID itself but decodes the key through the decoder framework.
 */
static inline EVP_PKEY *COpenSSL_d2i_RSA_public_key(const unsigned char **cursor, long length) {
    static const unsigned char rsaEncryption[] = {0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
    const unsigned char *der = *cursor;
    if (length < 2 || der[0] != 0x30) return NULL;
    long header = 2;
    if (der[1] & 0x80) header += der[1] & 0x7f;
    if (length < header + (long)sizeof(rsaEncryption) || memcmp(der + header, rsaEncryption, sizeof(rsaEncryption)) != 0) return NULL;
    const unsigned char *after = der;
    EVP_PKEY *key = COpenSSL_wrap_RSA(d2i_RSA_PUBKEY(NULL, &after, length));
    ERR_clear_error();
    if (key != NULL) *cursor = after;
    return key;
}

/* PKCS#1 v1.5 with the RSA code itself, for keys made by COpenSSL_d2i_RSA_private_key: the EVP path would
   copy the key into a provider, where blinding is on again. 1 on success, like RSA_sign. */
static inline int COpenSSL_RSA_sign_PKCS1(EVP_PKEY *key, int digestNID, const unsigned char *digest, unsigned int digestLength,
                                          unsigned char *signature, unsigned int *signatureLength) {
    RSA *rsa = (RSA *)EVP_PKEY_get0_RSA(key);
    if (rsa == NULL) return 0;
    return RSA_sign(digestNID, digest, digestLength, signature, signatureLength, rsa);
}

/* The verifying half of COpenSSL_RSA_sign_PKCS1, for public keys made by COpenSSL_d2i_RSA_public_key: no
   provider copy, so parallel verifications take no global lock. 1 when the signature verifies. */
static inline int COpenSSL_RSA_verify_PKCS1(EVP_PKEY *key, int digestNID, const unsigned char *digest, unsigned int digestLength,
                                            const unsigned char *signature, unsigned int signatureLength) {
    RSA *rsa = (RSA *)EVP_PKEY_get0_RSA(key);
    if (rsa == NULL) return 0;
    return RSA_verify(digestNID, digest, digestLength, signature, signatureLength, rsa);
}

#pragma GCC diagnostic pop

#endif
