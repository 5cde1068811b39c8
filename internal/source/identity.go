package source

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/ctxio"
	"github.com/osslbuild/osslbuild/internal/source/unpack"
)

// ErrIdentity marks a tarball that is not the release it is offered as: its
// top-level directory or its version file names another version, or it has
// no version file at all. A signature cannot catch this: a genuine tarball of
// one release, served under another release's name, carries a valid
// signature by a pinned key.
var ErrIdentity = errors.New("not the release it is named as")

// Identity is what a release tarball says about itself.
type Identity struct {
	TopDir       string   // the top-level directory, "openssl-4.0.2"
	VersionFiles []string // the members that state the version, "openssl-4.0.2/VERSION.dat"
	Version      string   // the version they state, "4.0.2"
}

// The version files, relative to the top-level directory. VERSION.dat is
// the source of truth since 3.0 (opensslv.h is generated from it at build
// time and only opensslv.h.in ships); older releases ship opensslv.h.
const (
	versionDat = "VERSION.dat"
	opensslvH  = "include/openssl/opensslv.h"
)

// identityLimits and maxVersionFile bound what CheckIdentity reads from a
// tarball that nothing has vouched for yet: the archive walker's limits (the
// decompressed stream, OpenSSL 4.0: 140 MB; members, pax global headers
// included) and the bytes of one version file (opensslv.h 1.1.1: 4 KB).
var identityLimits = inspect.Limits{MaxTotalBytes: 1 << 30, MaxMembers: unpack.DefaultMaxEntries}

const maxVersionFile = 64 << 10

// CheckIdentity reads the release tarball at path once, as a stream, and
// requires it to be OpenSSL version: every member below the top-level
// directory openssl-<version>/, and each version file present (VERSION.dat,
// include/openssl/opensslv.h; at least one) stating exactly version, with no
// pre-release tag. It reads the stream to its end, so a truncated or corrupt
// gzip stream is refused too. Errors name the tarball and the member, what
// was expected and what was found, and wrap ErrIdentity when the tarball is
// readable but names another release.
func CheckIdentity(ctx context.Context, path, version string) (Identity, error) {
	f, _, err := ctxio.OpenRegular(path, true)
	if err != nil {
		return Identity{}, fmt.Errorf("identity: %w", err)
	}
	defer f.Close()
	return checkIdentity(ctx, f, filepath.Base(path), version, identityLimits)
}

func checkIdentity(ctx context.Context, r io.Reader, name, version string, lim inspect.Limits) (Identity, error) {
	fail := func(format string, args ...any) (Identity, error) {
		return Identity{}, fmt.Errorf("%s: "+format, append([]any{name}, args...)...)
	}
	if version == "" {
		return fail("no version to check against")
	}
	want := Identity{TopDir: "openssl-" + version, Version: version}

	var got Identity
	err := inspect.WalkTarGzEntries(ctx, name, r, lim, func(m inspect.Member, body io.Reader) error {
		hdr := m.Tar
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			return nil // git archive's metadata, not a member
		}
		top, rel, err := unpack.SplitName(hdr.Name)
		if err != nil {
			return fmt.Errorf("member %q: %w", hdr.Name, err)
		}
		if top != want.TopDir {
			return fmt.Errorf("member %q: %w: top-level directory %q, want %q", hdr.Name, ErrIdentity, top+"/", want.TopDir+"/")
		}
		got.TopDir = top
		if rel != versionDat && rel != opensslvH {
			return nil
		}
		if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != tar.TypeRegA {
			return fmt.Errorf("member %q: %w: the version file is not a regular file (type %q)", hdr.Name, ErrIdentity, hdr.Typeflag)
		}
		if slices.Contains(got.VersionFiles, top+"/"+rel) {
			return fmt.Errorf("member %q: %w: the version file appears twice", hdr.Name, ErrIdentity)
		}
		if hdr.Size > maxVersionFile {
			return fmt.Errorf("member %q: %w: %d bytes, more than the %d a version file may have", hdr.Name, ErrIdentity, hdr.Size, maxVersionFile)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return fmt.Errorf("member %q: %w", hdr.Name, err)
		}
		// The version the file states, and the lines it comes from (for errors).
		read := versionFromHeader
		if rel == versionDat {
			read = versionFromDat
		}
		stated, how, err := read(b)
		if err != nil {
			return fmt.Errorf("member %q: %w: %v", hdr.Name, ErrIdentity, err)
		}
		if stated != version {
			return fmt.Errorf("member %q: %w: states version %s (%s), want %s", hdr.Name, ErrIdentity, stated, how, version)
		}
		got.VersionFiles = append(got.VersionFiles, top+"/"+rel)
		return nil
	})
	if err != nil {
		return fail("%w", err)
	}
	switch {
	case got.TopDir == "":
		return fail("%w: no members, want %s/", ErrIdentity, want.TopDir)
	case len(got.VersionFiles) == 0:
		return fail("%w: no version file: want %s/%s or %s/%s stating %s", ErrIdentity, want.TopDir, versionDat, want.TopDir, opensslvH, version)
	}
	got.Version = version
	return got, nil
}

// versionFromDat reads VERSION.dat's KEY=VALUE lines: MAJOR.MINOR.PATCH,
// then "-" PRE_RELEASE_TAG and "+" BUILD_METADATA when set, the way
// OpenSSL's own build composes OPENSSL_FULL_VERSION_STR.
func versionFromDat(body []byte) (version, how string, err error) {
	kv := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return "", "", fmt.Errorf("line %q is not KEY=VALUE", line)
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
		if _, dup := kv[k]; dup {
			return "", "", fmt.Errorf("%s= appears twice", k)
		}
		kv[k] = v
	}
	var parts []string
	for _, k := range []string{"MAJOR", "MINOR", "PATCH"} {
		v, ok := kv[k]
		if !ok {
			return "", "", fmt.Errorf("no %s= line", k)
		}
		if !digits.MatchString(v) {
			return "", "", fmt.Errorf("%s=%s is not a number", k, v)
		}
		parts = append(parts, v)
	}
	version = strings.Join(parts, ".")
	how = fmt.Sprintf("MAJOR=%s MINOR=%s PATCH=%s", parts[0], parts[1], parts[2])
	if pre := kv["PRE_RELEASE_TAG"]; pre != "" {
		version += "-" + pre
		how += " PRE_RELEASE_TAG=" + pre
	}
	if meta := kv["BUILD_METADATA"]; meta != "" {
		version += "+" + meta
		how += " BUILD_METADATA=" + meta
	}
	return version, how, nil
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// versionDefine matches opensslv.h's version strings: OPENSSL_VERSION_TEXT
// ("OpenSSL 1.1.1w  11 Sep 2023") and, from 3.0's generated header,
// OPENSSL_VERSION_STR ("3.0.20").
var versionDefine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(OPENSSL_VERSION_TEXT|OPENSSL_VERSION_STR)[ \t]+"([^"]*)"`)

// versionFromHeader reads opensslv.h. Every definition must state the same
// version; 1.0.2 defines OPENSSL_VERSION_TEXT twice, once with a "-fips"
// suffix for FIPS builds, which names the same release.
func versionFromHeader(body []byte) (version, how string, err error) {
	ms := versionDefine.FindAllSubmatch(body, -1)
	if len(ms) == 0 {
		return "", "", errors.New("no #define OPENSSL_VERSION_TEXT or OPENSSL_VERSION_STR")
	}
	for _, m := range ms {
		macro, val := string(m[1]), string(m[2])
		v := val
		if macro == "OPENSSL_VERSION_TEXT" {
			f := strings.Fields(val)
			if len(f) < 2 || f[0] != "OpenSSL" {
				return "", "", fmt.Errorf("%s %q does not start with \"OpenSSL <version>\"", macro, val)
			}
			v = strings.TrimSuffix(f[1], "-fips")
		}
		if version == "" {
			version, how = v, fmt.Sprintf("%s %q", macro, val)
			continue
		}
		if v != version {
			return "", "", fmt.Errorf("states two versions: %s and %s %q", version, macro, val)
		}
	}
	return version, how, nil
}
