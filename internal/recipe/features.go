package recipe

// releaseFeatures are the feature names each release's Configure takes
// after no- and enable- (its @disablables, with the TLS and DTLS protocols
// and their -method forms it appends), read from the Configure of the
// upstream tarball of each release (the tarballs the end-to-end tests
// fetch) with
//
//	perl -e 'local $/; $s = <>; $s =~ /(my \@tls = .*?\nmy %deprecated_disablables = \(.*?\n\s*\);)/s;
//	         ($c = $1) =~ s/^my /our /mg; eval $c; print join(" ", sort @disablables), "\n"' Configure
//
// Configure also takes %deprecated_disablables, which it ignores with a
// warning or maps to another name: they are left out, so a recipe names
// the feature itself. These are facts about the releases: a release added
// here is read the same way, never typed in.
var releaseFeatures = map[string]string{
	"3.0.20": `
		acvp-tests afalgeng aria asan asm async atexit autoalginit autoerrinit
		autoload-config bf blake2 buildtest-c++ bulk cached-fetch camellia
		capieng cast chacha cmac cmp cms comp crypto-mdebug ct deprecated
		des devcryptoeng dgram dh dsa dso dtls dtls1 dtls1-method dtls1_2
		dtls1_2-method dynamic-engine ec ec2m ec_nistp_64_gcc_128 ecdh ecdsa
		egd engine err external-tests filenames fips fips-securitychecks
		fuzz-afl fuzz-libfuzzer gost idea ktls legacy loadereng makedepend
		md2 md4 mdc2 module msan multiblock nextprotoneg ocb ocsp padlockeng
		pic pinshared poly1305 posix-io psk rc2 rc4 rc5 rdrand rfc3779 rmd160
		scrypt sctp secure-memory seed shared siphash siv sm2 sm3 sm4 sock
		srp srtp sse2 ssl ssl-trace ssl3 ssl3-method static-engine stdio tests
		threads tls tls1 tls1-method tls1_1 tls1_1-method tls1_2 tls1_2-method
		tls1_3 trace ts ubsan ui-console unit-test uplink weak-ssl-ciphers
		whirlpool zlib zlib-dynamic
	`,
	"3.5.7": `
		acvp-tests afalgeng apps argon2 aria asan asm async atexit
		autoalginit autoerrinit autoload-config bf blake2 brotli brotli-dynamic
		buildtest-c++ bulk cached-fetch camellia capieng cast chacha cmac cmp
		cms comp crypto-mdebug ct default-thread-pool demos deprecated des
		devcryptoeng dgram dh docs dsa dso dtls dtls1 dtls1-method dtls1_2
		dtls1_2-method dynamic-engine ec ec2m ec_nistp_64_gcc_128 ecdh ecdsa
		ecx egd engine err external-tests filenames fips fips-jitter fips-post
		fips-securitychecks fuzz-afl fuzz-libfuzzer gost h3demo hqinterop http
		idea integrity-only-ciphers jitter ktls legacy loadereng makedepend
		md2 md4 mdc2 ml-dsa ml-kem module msan multiblock nextprotoneg ocb
		ocsp padlockeng pic pie pinshared poly1305 posix-io psk quic rc2
		rc4 rc5 rdrand rfc3779 rmd160 scrypt sctp secure-memory seed shared
		siphash siv slh-dsa sm2 sm2-precomp sm3 sm4 sock srp srtp sse2 ssl
		ssl-trace ssl3 ssl3-method sslkeylog static-engine stdio tests tfo
		thread-pool threads tls tls-deprecated-ec tls1 tls1-method tls1_1
		tls1_1-method tls1_2 tls1_2-method tls1_3 trace ts ubsan ui-console
		unit-test unstable-qlog uplink weak-ssl-ciphers whirlpool winstore
		zlib zlib-dynamic zstd zstd-dynamic
	`,
	"4.0.2": `
		acvp-tests allocfail-tests apps argon2 aria asan asm async atexit
		autoalginit autoerrinit autoload-config bf blake2 brotli brotli-dynamic
		buildtest-c++ bulk cached-fetch camellia cast chacha cmac cmp cms
		comp crypto-mdebug ct default-thread-pool demos deprecated des dgram
		dh docs dsa dso dtls dtls1 dtls1-method dtls1_2 dtls1_2-method ec
		ec2m ec_explicit_curves ec_nistp_64_gcc_128 ecdh ecdsa ech ecx egd err
		external-tests filenames fips fips-jitter fips-post fips-securitychecks
		fuzz-afl fuzz-libfuzzer gost h3demo hmac-drbg-kdf hqinterop http idea
		integrity-only-ciphers jitter kbkdf krb5kdf ktls legacy lms makedepend
		md2 md4 mdc2 ml-dsa ml-kem module msan multiblock nextprotoneg ocb
		ocsp pic pie pinshared poly1305 posix-io psk pvkkdf quic rc2 rc4 rc5
		rdrand rfc3779 rmd160 scrypt sctp secure-memory seed shared siphash
		siv slh-dsa sm2 sm2-precomp sm3 sm4 snmpkdf sock srp srtp srtpkdf
		sse2 sshkdf sskdf ssl-trace sslkeylog static-vcruntime stdio tests
		tfo thread-pool threads tls tls-deprecated-ec tls1 tls1-method tls1_1
		tls1_1-method tls1_2 tls1_2-method tls1_3 trace ts ubsan ui-console
		unit-test unstable-qlog uplink weak-ssl-ciphers whirlpool winstore
		x942kdf x963kdf zlib zlib-dynamic zstd zstd-dynamic
	`,
}
