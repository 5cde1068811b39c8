#ifndef MINI_OPENSSLV_H
# define MINI_OPENSSLV_H
# define OPENSSL_VERSION_TEXT "OpenSSL 9.9.9 30 Nov 2026"
const char *OpenSSL_version(int t);
#endif
