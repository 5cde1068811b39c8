#ifndef MINI_SSL_H
# define MINI_SSL_H
# include <openssl/opensslv.h>
int SSL_library_init(void);
#endif
