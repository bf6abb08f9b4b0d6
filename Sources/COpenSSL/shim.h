/* OpenSSL libcrypto for the Hashing module only (the one Swift importer): digests, HMAC, random bytes and
 * scrypt through EVP_KDF. */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/err.h>
