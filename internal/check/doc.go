// Package check audits any OpenSSL build, wherever it ended up: a thin or
// universal Mach-O file or static library, an ELF shared object, executable
// or archive, a Python wheel, an osslbuild artifact directory or tarball, or
// a directory holding any of these. For every architecture slice it reports
// the OpenSSL version, the "platform:", "built on:" and "compiler:" strings,
// the effective optimisation and (Mach-O) the deployment target, and holds
// them against a small policy. It is the `check` mage target.
//
// # Rules
//
//   - Optimisation: every distinct "compiler:" line in a slice must optimise
//     at least at Options.MinOpt (default -O2). The effective level is the
//     last -O flag; a line with none was built without optimisation (-O0),
//     which is how pyca's macOS wheels shipped when CFLAGS in Configure's
//     environment replaced OpenSSL's "-O3 -Wall".
//   - Compiler line: a slice that contains libcrypto must carry a compiler
//     line. It contains libcrypto when it holds any string only libcrypto's
//     own crypto/cversion.c and crypto/info.c compile in: "platform: ",
//     "built on: ", "OPENSSLDIR: ", "MODULESDIR: ", "ENGINESDIR: ". They
//     live in the same object as the compiler line, so one without the other
//     means the line was cut or stripped. An OpenSSL version string alone is
//     not enough: OPENSSL_VERSION_TEXT is a header macro that programs
//     linking libcrypto dynamically embed too (Debian's /usr/bin/openssl
//     does); such a slice is reported, with a note, and not judged: the
//     library it loads is the one to check. Symbols are not used: shipped
//     extension modules are stripped and export only PyInit_*, so symbols
//     are missing exactly where the question matters.
//   - Architectures: every binary found (file, or member of a wheel or
//     tarball) must have a slice for every architecture of Options.Archs
//     (arm64 and aarch64 are the same, as are x86_64 and amd64), as
//     delocate's --require-archs demands of every binary in a wheel. In an
//     osslbuild artifact (a directory or tarball with manifest.json) the
//     manifest's architectures are required when Options.Archs is empty, and
//     every Mach-O object must carry the manifest's deployment target.
//   - Something to judge: at least one compiler line must be found in the
//     whole input, else the check fails ("no OpenSSL compiler line found"),
//     so a wheel whose libcrypto strings were stripped cannot pass silently.
//   - A file that cannot be inspected (malformed, truncated, over a limit)
//     fails the check with an error naming the file, member and slice.
//
// # Inputs
//
// Files are recognised by magic number, never by name; a directory walk
// reads 8 bytes of each file and skips the rest quickly. Symbolic links are
// not followed (a lib/libcrypto.so -> libcrypto.so.3 chain would report one
// library twice, and a loop would never end).
//
// Wheels (zip) and tarballs (tar.gz) are streamed: each member whose first
// bytes are a binary's magic is decompressed once into a temporary file
// (deleted as soon as it is inspected, so at most one member is on disk at
// a time), because inspect needs random access. Decompression is bounded
// per member, in total and by ratio (inspect.Limits): a bomb is refused with
// an error naming the archive and member. Archives are opened one level
// deep: a zip or tar.gz inside a wheel or tarball is listed as "nested
// archive, not inspected", never opened, so nesting cannot multiply the
// limits.
//
// # JSON
//
// With Options.JSON the output is one JSON object, schema
// "https://github.com/osslbuild/osslbuild/check/v1" (the Result type; field
// names are stable, fields are only ever added; member, artifact, error,
// problems, version, platform, built_on, minos, minos_counts, compiler,
// compilers, opt and opt_flag are left out when empty; arrays at the top
// level are never null):
//
//	{
//	  "schema": "https://github.com/osslbuild/osslbuild/check/v1",
//	  "path": "dist/x.whl", "min_opt": "-O2", "archs": ["arm64"],
//	  "ok": false,
//	  "binaries": [{
//	    "path": "dist/x.whl", "member": "pkg/_rust.abi3.so", "artifact": "",
//	    "format": "universal", "size": 123, "sha256": "…", "error": "",
//	    "problems": [{"rule": "arch", "message": "…"}],
//	    "slices": [{
//	      "arch": "arm64", "format": "ar", "objects": 1026,
//	      "version": "OpenSSL 4.0.2 …", "platform": "darwin64-arm64-cc",
//	      "built_on": "…", "minos": "11.0", "minos_mixed": false,
//	      "minos_counts": {"11.0": 1026},
//	      "compiler": "cc -fPIC -arch arm64 …", "compilers": ["…"],
//	      "opt": "-O0", "opt_flag": "", "libcrypto": true, "ok": false,
//	      "problems": [{"rule": "optimisation", "message": "built without optimisation (-O0): …"}]
//	    }]
//	  }],
//	  "notes": ["…"], "skipped": 12, "failures": ["…"]
//	}
package check
