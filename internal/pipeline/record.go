package pipeline

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/artifact"
	"github.com/osslbuild/osslbuild/internal/recipe"
	"github.com/osslbuild/osslbuild/internal/sbom"
	"github.com/osslbuild/osslbuild/internal/source"
	"github.com/osslbuild/osslbuild/internal/source/signature"
	"github.com/osslbuild/osslbuild/keys"
)

// record writes manifest.json (how the slice was made, and the sha256 of
// every file) and sbom.json into the artifact tree.
func record(ctx context.Context, j *job) error {
	p, r := j.plan, j.run
	_, id, err := r.toolchain(ctx, p.Slice)
	if err != nil {
		return err
	}
	m := &artifact.Manifest{
		Name:      j.name,
		Osslbuild: r.Revision,
		Recipe:    recipeRef(p.Recipe),
		OpenSSL:   sourceRef(j.source),
		Target:    p.Slice,
		Toolchain: id,
		Configure: artifact.Configure{
			Argv:   j.argv,
			Env:    scrubWork(j.env, j.work),
			CFLAGS: j.gate.CFLAGS,
		},
		Variant:         j.variant,
		SourceDateEpoch: j.tree.SourceDateEpoch,
		CompilerLines:   j.lines,
		CodeEvidence:    j.code,
		LinkChecks:      j.links,
		Patches:         []artifact.Patch{},
	}
	for _, ap := range j.tree.Patches {
		m.Patches = append(m.Patches, artifact.Patch{Name: ap.Name, SHA256: ap.SHA256})
	}
	if m.Dylibs, err = artifact.DylibsOf(j.dir, p.Slice); err != nil {
		return err
	}
	if err := sbom.Write(j.dir, m); err != nil {
		return err
	}
	if err := artifact.WriteManifest(ctx, j.dir, m); err != nil {
		return err
	}
	j.manifest = m
	return nil
}

func sourceRef(v *source.Verified) artifact.Source {
	s := artifact.Source{
		Version: v.Release.Version, File: v.Release.FileName(),
		SHA256: v.Tarball.SHA256, Size: v.Tarball.Size, URL: recordedURL(v.Release, v.Tarball.URL),
	}
	if v.Signature != nil {
		s.SignatureURL = recordedURL(v.Release, strings.TrimSuffix(v.Signature.URL, ".asc")) + ".asc"
		s.SignatureSHA256 = v.Signature.SHA256
	}
	if v.Signer != nil {
		s.Signer, s.SigningKey = v.Signer.Signer, v.Signer.SigningKey
		s.SignedAt = v.Signer.Created.UTC().Format(time.RFC3339)
		s.SignerKey = keyRef(v.Signer.Key)
	}
	return s
}

func keyRef(k signature.Key) *artifact.KeyRef {
	return &artifact.KeyRef{Fingerprint: k.Fingerprint, Origin: k.Origin, Path: k.Path, SHA256: k.SHA256}
}

// keyRefs are the key files that may verify rel, as a manifest records
// them: osslbuild's keys/, then the recipe's release keys.
func keyRefs(rel recipe.Release) []artifact.KeyRef {
	var out []artifact.KeyRef
	for _, f := range keys.Fingerprints() {
		if b, err := keys.Armored(f); err == nil {
			out = append(out, artifact.KeyRef{Fingerprint: f, Origin: signature.OriginOsslbuild, Path: keys.Path(f), SHA256: artifact.SHA256(b)})
		}
	}
	for _, k := range rel.Keys {
		out = append(out, *keyRef(k))
	}
	return out
}

// scrubWork writes the private build directory as $WORK, so the manifest is
// the same whichever directory built it.
func scrubWork(env []string, work string) []string { return replaceIn(env, work, "$WORK") }

// replaceIn is l with every old replaced by new in each string.
func replaceIn(l []string, old, new string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = strings.ReplaceAll(s, old, new)
	}
	return out
}

// recordedURL is the source URL as the manifest records it: one of the
// recipe's URLs, or "mirror:<file>" for a local mirror or cache, whose
// location is machine-specific (the pinned sha256 says what the bytes were).
func recordedURL(rel recipe.Release, u string) string {
	if slices.Contains(rel.URLs, u) {
		return u
	}
	return "mirror:" + rel.FileName()
}

// recipeRef is how a manifest names the recipe: its origin, the path it
// records (never an absolute one), its digest and, for a file recipe, its
// bytes (an embedded one is in the revision the manifest names).
func recipeRef(r *recipe.Recipe) artifact.RecipeRef {
	ref := artifact.RecipeRef{Name: r.Name, Origin: r.Origin, Path: r.RecordedPath(), SHA256: r.SHA256}
	if r.Origin == recipe.OriginFile {
		ref.Content = string(r.Bytes)
	}
	return ref
}
