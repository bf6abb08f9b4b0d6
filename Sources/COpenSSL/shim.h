/* OpenSSL libcrypto for the Hashing module only (the one Swift importer): digests, HMAC, random bytes, scrypt
 * through EVP_KDF, and ES256 (ECDSA P-256) keys and signatures for APNs provider tokens. */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
