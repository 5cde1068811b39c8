// Package check audits any OpenSSL build, wherever it ended up: a thin or
// universal Mach-O file or static library, an ELF shared object, executable
// or archive, a Python wheel, an osslbuild artifact directory or tarball, or
// a directory holding any of these. For every architecture slice it reports
// the library family and version, the "platform:", "built on:" and
// "compiler:" strings, the optimisation the evidence shows, what the machine
// code says (inspect's code classifier: -O0-like, optimised or too little
// evidence, with its score and the functions measured) and (Mach-O) the
// deployment target, and holds them against the rules of package validate,
// the same rule engine the build uses. It is the `check` mage target.
//
// # Which compiler line
//
// A slice may hold several "compiler: " strings. OpenSSL lays out its build
// information together (crypto/cversion.c returns the version, "built on:",
// "platform:" and OPENSSLDIR strings beside buildinf.h's compiler_flags, in
// one object), so inspect.RecordOf counts a string as OpenSSL's only when
// it carries Configure's -D flags or lies beside libcrypto's other build
// strings (Candidate.Attested): a lone "compiler: " (V8's WebAssembly
// printer, in every Node.js) is no evidence, of the flags or of OpenSSL.
// Of the attested lines it chooses one with Configure's flags; then the
// one laid out with the most others; then one that records anything; and
// when nothing tells them apart, the least optimised. A decoy "compiler:
// cc -O3" elsewhere in the data never rescues a build line without -O.
// Every candidate is listed, with its evidence, in -json.
//
// # Exit policy
//
//   - A slice fails when its evidence shows less than -minopt (0, 1, 2, 3,
//     s or z; default 2). The evidence is the chosen compiler line (its
//     last -O flag, no -O flag meaning -O0, the pyca case; -Os and -Oz
//     optimise, for size: they meet -minopt 2, reported as such, not 3)
//     and the machine code. Where no line shows a level (libssl, a
//     placeholder, any library) the code decides: -O0-like fails any
//     -minopt above 0, optimised passes.
//   - A compiler line the machine code contradicts fails whatever -minopt,
//     naming both: the line optimises (-O1 to -O3, -Os, -Oz) and the code
//     looks -O0, or the line has no -O and the code looks optimised. Code
//     with too little evidence contradicts nothing, except: where the
//     few functions measured (10 or more) beneath a line that optimises
//     look -O0 (a stripped -O0 archive), the optimisation is unknown, not
//     ok, and -strict fails the slice; without it a note says so.
//   - Build information and machine code count only in bytes the format
//     loads: a linked Mach-O's segments, a linked ELF's PT_LOAD segments,
//     a PE image's sections, an object's allocated sections. Strings
//     elsewhere (appended past an image's end, an ELF section no segment
//     maps) are no evidence; a note names the file and the bytes, and
//     -json's unmapped lists them.
//   - Unknown is not -O0: a placeholder line ("compiler: n/a" from
//     BoringSSL and AWS-LC, "information not available" from LibreSSL,
//     an empty line) or libcrypto's strings without a line, with too little
//     machine code to judge, is reported, with the library named
//     ("BoringSSL: no compiler line recorded"), and fails only with
//     -strict.
//   - Only slices holding OpenSSL's (or a fork's) code are judged, as
//     validate.HoldsOpenSSL tells from their strings: a compiler line,
//     libcrypto's build information, or the library's source paths
//     (libssl records only those; OpenSSL 1.0.2's libssl, beside the
//     version string, its bare names: s3_clnt.c). Their machine code is
//     measured; other slices (a program loading libcrypto at run time, a
//     bundle's libz) are listed with the status "not judged", neither
//     measured nor judged, and counted in the summary line. At least one slice in the
//     whole input must be judged, so a wheel whose OpenSSL left no trace
//     cannot pass silently.
//   - A judged slice whose version string names an OpenSSL release of a
//     series past its end of life (package lifecycle's table: 1.1.1 on
//     2023-09-11, 3.0 on 2026-09-07) is named with the date in a note, the
//     table's VERSION column and the JSON's series; it fails only with
//     -strict. Forks' "OpenSSL 1.1.1 (compatible; ...)" names no release.
//   - Every binary must have a slice for every -arch (arm64 and aarch64
//     are one, as are x86_64 and amd64), as delocate's --require-archs
//     demands of every binary in a wheel; the slices of one file must
//     embed one version.
//   - An osslbuild artifact (a directory or tarball with its manifest.json)
//     is held to everything its manifest promises: every file's sha256
//     (missing, unlisted, changed files and links are named, with both
//     digests), and each library against the build's own expectations for
//     each slice: every member's CPU type and minos, one compiler line at
//     -O3 with the target's flags and -arch, the platform, one OpenSSL
//     version across all slices and the manifest, and the class of each
//     library's code_evidence (the code is measured again, whatever its
//     strings).
//   - A wheel's PEP 770 SBOMs (.dist-info/sboms/*) and an artifact's
//     sbom.json (CycloneDX or SPDX JSON) are held to the binaries beside
//     them: an OpenSSL version listed that is not the one found fails
//     (rule sbom-mismatch) naming both and the binary, found but not
//     listed is a note, and an SBOM that cannot be read fails (rule
//     sbom-malformed) naming the member.
//   - A file that cannot be inspected (malformed, truncated, over a limit)
//     fails the check with an error naming the file, member and slice.
//
// # Inputs
//
// Files are recognised by magic number, never by name; a directory walk
// reads 8 bytes of each file and leaves the rest unread unless it is a
// binary or belongs to an artifact. Each binary is read once, into a
// buffer its worker reuses or, when larger than 4 MiB, mapped, and hashed
// (sha256) and searched from there; a large one is hashed on a second core
// while it is inspected, and small files are inspected several at once, one
// per CPU.
//
// The path given may be a link; it is followed. Anything but a regular
// file or directory given as the path (a FIFO, socket or device) is refused
// without being opened. Inside a directory such files are skipped with a
// note, and links are never followed: a link pointing inside the directory
// reaches a file the walk checks anyway (the link is listed with it, so
// each file is checked once), a link pointing outside is noted, not read,
// and so loops cannot form.
//
// Wheels (zip) and tarballs (tar.gz) are streamed: each member whose first
// bytes are a binary's magic is decompressed once, hashed on the way, and
// inspected in memory (a temporary file when larger than 64 MiB).
// Decompression is bounded per member, in total and by ratio
// (inspect.Limits): a bomb is refused with an error naming the archive and
// member. Archives are opened one level deep: a zip or tar.gz inside a
// wheel or tarball is noted, never opened.
//
// # Output
//
// A table (or with Options.JSON one JSON document), every failure and note
// in full, and a verdict. Under GitHub Actions, an ::error annotation per
// failing slice and artifact, a ::warning per unknown optimisation, and a
// step-summary table. Every line that can carry a file name, and the
// returned error that mage prints, is made safe there (report.SafeText):
// a file named "a\n::warning::x" is printed, not obeyed.
//
// # JSON
//
// Schema "https://github.com/osslbuild/osslbuild/check/v1" (the Result
// type; field names are stable, fields are only ever added; member,
// artifact, links, error, problems, family, version, platform, built_on,
// minos, minos_counts, compiler, compilers, candidates, opt, opt_flag,
// unknown, opt_source, code, evidence and unmapped are left out when empty; arrays at the top level
// are never null):
//
//	{
//	  "schema": "https://github.com/osslbuild/osslbuild/check/v1",
//	  "path": "dist/x.whl", "min_opt": "-O2", "strict": false, "archs": ["arm64"],
//	  "ok": false,
//	  "binaries": [{
//	    "path": "dist/x.whl", "member": "pkg/_rust.abi3.so", "artifact": "",
//	    "format": "universal", "size": 123, "sha256": "…", "error": "",
//	    "problems": [{"rule": "slices", "message": "…"}],
//	    "slices": [{
//	      "arch": "arm64", "format": "ar", "objects": 1026, "family": "OpenSSL",
//	      "version": "OpenSSL 4.0.2 …", "platform": "darwin64-arm64-cc",
//	      "built_on": "…", "minos": "11.0", "minos_mixed": false,
//	      "minos_counts": {"11.0": 1026},
//	      "compiler": "cc -fPIC -arch arm64 …", "compilers": ["…"],
//	      "candidates": [{"line": "…", "member": "libcrypto-lib-cversion.o", "offset": 123,
//	        "beside": ["built on", "platform", "version"], "configured": true,
//	        "placeholder": false, "attested": true, "chosen": true}],
//	      "opt": "-O0", "opt_flag": "", "opt_status": "below", "opt_source": "compiler-line",
//	      "code": {"class": "-O0-like", "score": 0.912, "functions": 4096, "instructions": 201337,
//	        "objects": 512, "asm_objects": 11},
//	      "evidence": [{"source": "compiler-line", "known": true, "opt": "-O0", "detail": "compiler: …"},
//	        {"source": "machine-code", "known": true, "opt": "-O0-like", "detail": "-O0-like (score 0.91 over 4096 functions)"}],
//	      "isa": {"level": "x86-64-v3", "extensions": ["SSSE3", "AVX", "AVX2"], "functions": 12842,
//	        "instructions": 708942, "undecoded": 0, "attribution": "members", "asm_objects": 41,
//	        "limit": "core2", "list": "OpenSSL 4.0 (known)", "dispatched": ["encode_base64_avx2"], "above": []},
//	      "series": {"name": "4.0", "end_of_life": "2027-05-14", "lts": false, "ended": false},
//	      "libcrypto": true,
//	      "unmapped": [{"start": 7837712, "end": 7837755, "where": "past the end of the Mach-O image (…)",
//	        "strings": ["compiler: cc -O3 -DOPENSSL_PIC -DL_ENDIAN"]}],
//	      "status": "failed", "ok": false,
//	      "problems": [{"rule": "optimisation", "member": "libcrypto-lib-cversion.o",
//	        "message": "compiler line has no -O flag (built without optimisation (-O0)), …"}]
//	    }]
//	  }],
//	  "artifacts": [{"path": "dist/openssl-macos-arm64", "name": "openssl-macos-arm64",
//	    "version": "4.0.2", "files": 180, "ok": true}],
//	  "notes": ["…"], "skipped": 12, "slices": 2, "not_judged": 0, "end_of_life": 0,
//	  "failures": ["…"]
//	}
//
// opt_status is ok, below, unknown or none (not judged: the slice holds no
// sign of OpenSSL's code, or only too little machine code besides);
// opt_source is the evidence it rests on, compiler-line or machine-code
// (then opt is "optimised" or "-O0-like"); code is left out where the
// code was not measured (slices not holding OpenSSL).
// status is ok, failed, or "not judged" for a slice that holds no
// OpenSSL (ok is true there too: nothing was broken, nothing was judged).
// isa is there for x86-64 slices: limit, list, dispatched and above when a
// level was held to (-isa, or an artifact's -march); attribution "linked"
// means above is reported, not failed.
// Problem rules are validate's (optimisation, compiler-line, slices, cpu,
// filetype, deployment-target, arch-flag, flag, platform, version, format,
// instruction-set) and check's own: manifest (an artifact's manifest cannot
// be held against its library) and end-of-life (-strict). Artifact file
// mismatches are listed under the artifact; an SBOM's problems (rules
// sbom-mismatch, sbom-malformed) under the SBOM, in sboms.
//
// # SARIF
//
// Options.Format "sarif" prints a SARIF 2.1.0 log for code scanning
// instead: one result per failing slice (and per binary or artifact with a
// problem of its own), whose ruleId is its first problem's rule and whose
// message lists them all; the JSON above is everything found, SARIF only
// the failures. cmd/osslcheck is this package as a command.
package check
