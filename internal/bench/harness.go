package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/osslbuild/osslbuild/internal/proc"
)

// Ops are the operations the harness times, in its output order.
var Ops = []string{
	"ML-KEM-768 encapsulate",
	"ML-KEM-768 decapsulate",
	"ML-DSA-65 sign",
	"ML-DSA-65 verify",
	"Ed25519 sign",
	"ECDSA P-256 sign",
	"SHA3-256 64 KiB",
}

// Compile builds the harness source against the artifact directory
// (include/ and lib/libcrypto.a) into the executable out. libcrypto is
// linked statically, by path, so the binary runs exactly the library being
// measured and never a system libcrypto.
func Compile(ctx context.Context, cc, source, artifact, out string) error {
	ccPath, err := exec.LookPath(cmp.Or(cc, "cc"))
	if err != nil {
		return fmt.Errorf("bench: compile harness: %w", err)
	}
	for _, p := range []string{source, filepath.Join(artifact, "include", "openssl", "evp.h"), filepath.Join(artifact, "lib", "libcrypto.a")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("bench: compile harness: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("bench: compile harness: %w", err)
	}
	args := []string{ccPath, "-std=c11", "-O2", "-Wall",
		"-I" + filepath.Join(artifact, "include"),
		"-o", out, source,
		filepath.Join(artifact, "lib", "libcrypto.a"), "-lpthread", "-ldl"}
	// The compiler's environment is constructed, like the builds': no
	// CPATH, LIBRARY_PATH or C_INCLUDE_PATH can slip system headers in.
	env := []string{"PATH=" + filepath.Dir(ccPath) + ":/usr/bin:/bin", "LANG=C", "LC_ALL=C"}
	if _, err := proc.Output(ctx, proc.Cmd{Args: args, Env: env}); err != nil {
		return fmt.Errorf("bench: compile harness %s against %s: %w", source, artifact, err)
	}
	return nil
}

// Server is a harness started with -serve: set up and checked once, then
// asked for one short slice of one operation at a time.
type Server struct {
	Version  string // OpenSSL_version(OPENSSL_VERSION)
	Compiler string // OpenSSL_version(OPENSSL_CFLAGS): "compiler: cc ..."
	Platform string // OpenSSL_version(OPENSSL_PLATFORM)
	bin      string
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Scanner
	stderr   bytes.Buffer
}

// Serve starts bin -serve and reads its identification and correctness
// check; a failed check is an error carrying the harness's message.
func Serve(ctx context.Context, bin string) (*Server, error) {
	s := &Server{bin: bin}
	s.cmd = exec.CommandContext(ctx, bin, "-serve")
	s.cmd.Env = []string{"LANG=C", "LC_ALL=C"}
	s.cmd.Stderr = &s.stderr
	in, err := s.cmd.StdinPipe()
	out, err2 := s.cmd.StdoutPipe()
	if err = cmp.Or(err, err2); err == nil {
		err = s.cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("bench: serve %s: %w", bin, err)
	}
	s.in, s.out = in, bufio.NewScanner(out)
	var head strings.Builder
	// The identification lines' fields, by key.
	idents := map[string]*string{"version": &s.Version, "compiler": &s.Compiler, "platform": &s.Platform}
	for s.out.Scan() {
		head.WriteString(s.out.Text() + "\n")
		if s.out.Text() == "check\tok" {
			break
		}
		if k, v, _ := strings.Cut(s.out.Text(), "\t"); idents[k] != nil {
			*idents[k] = v
		}
	}
	if !strings.HasSuffix(head.String(), "check\tok\n") {
		return nil, s.fail(fmt.Errorf("no \"check ok\" after %q", head.String()))
	}
	if s.Version == "" || s.Compiler == "" {
		return nil, s.fail(fmt.Errorf("no version or compiler line in %q", head.String()))
	}
	return s, nil
}

// Slice runs calls calls of op (whole cycles of harnessCycle) and returns
// the median cycle's thread CPU time per call, in ms (osslbench.c says
// why).
func (s *Server) Slice(op string, calls int) (float64, error) {
	if _, err := fmt.Fprintf(s.in, "slice\t%s\t%d\n", op, calls); err != nil {
		return 0, s.fail(err)
	}
	if !s.out.Scan() {
		return 0, s.fail(fmt.Errorf("no answer for %s", op))
	}
	f := strings.Split(s.out.Text(), "\t")
	if len(f) != 4 || f[0] != "slice" || f[1] != op || f[3] != strconv.Itoa(calls) {
		return 0, s.fail(fmt.Errorf("answer %q to a slice of %d calls of %s", s.out.Text(), calls, op))
	}
	ms, err := strconv.ParseFloat(f[2], 64)
	if err != nil || ms < 0 || ms != ms {
		return 0, s.fail(fmt.Errorf("answer %q: median is not a non-negative number", s.out.Text()))
	}
	return ms, nil
}

// Close ends the harness (end of input) and waits for it.
func (s *Server) Close() error {
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("bench: harness %s: %w: %s", s.bin, err, strings.TrimSpace(s.stderr.String()))
	}
	return nil
}

// fail stops the harness and describes why, with what it printed on stderr.
func (s *Server) fail(err error) error {
	s.in.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
	return fmt.Errorf("bench: harness %s -serve: %w: %s", s.bin, err, strings.TrimSpace(s.stderr.String()))
}
