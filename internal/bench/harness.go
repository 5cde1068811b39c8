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
	"slices"
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

// Result is one run of the harness.
type Result struct {
	Version  string // OpenSSL_version(OPENSSL_VERSION)
	Compiler string // OpenSSL_version(OPENSSL_CFLAGS): "compiler: cc ..."
	Platform string // OpenSSL_version(OPENSSL_PLATFORM)
	Ops      []Op   // in Ops order
}

// Op is one operation's timing.
type Op struct {
	Name     string
	MedianMS float64 // median milliseconds per call
	Calls    int
}

// idents are the identification lines' fields, by key.
func (r *Result) idents() map[string]*string {
	return map[string]*string{"version": &r.Version, "compiler": &r.Compiler, "platform": &r.Platform}
}

// MedianMS returns the median for op, and whether it was measured.
func (r *Result) MedianMS(op string) (float64, bool) {
	for _, o := range r.Ops {
		if o.Name == op {
			return o.MedianMS, true
		}
	}
	return 0, false
}

// Parse reads the harness's tab-separated output (see bench/osslbench.c).
// It insists on the whole thing: the three identification lines, "check
// ok" before any timing, and every operation in Ops exactly once, so a
// harness that stopped half-way or an unrelated program never yields a
// table.
func Parse(r io.Reader) (*Result, error) {
	res := &Result{}
	checked := false
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		bad := func(why string) error {
			return fmt.Errorf("bench: harness output line %d %q: %s", n, line, why)
		}
		switch f[0] {
		case "version", "compiler", "platform":
			if len(f) != 2 || f[1] == "" {
				return nil, bad("want a key and a value")
			}
			dst := res.idents()[f[0]]
			if *dst != "" {
				return nil, bad("repeated")
			}
			*dst = f[1]
		case "check":
			if len(f) != 2 || f[1] != "ok" {
				return nil, bad("want \"check\\tok\"")
			}
			checked = true
		case "op":
			if len(f) != 4 {
				return nil, bad("want op, name, median ms, calls")
			}
			if !checked {
				return nil, bad("timing before the correctness checks passed")
			}
			if !slices.Contains(Ops, f[1]) {
				return nil, bad("unknown operation")
			}
			if _, ok := res.MedianMS(f[1]); ok {
				return nil, bad("operation repeated")
			}
			ms, err := strconv.ParseFloat(f[2], 64)
			if err != nil || ms < 0 || ms != ms {
				return nil, bad("median is not a non-negative number")
			}
			calls, err := strconv.Atoi(f[3])
			if err != nil || calls < 1 {
				return nil, bad("calls is not a positive count")
			}
			res.Ops = append(res.Ops, Op{Name: f[1], MedianMS: ms, Calls: calls})
		default:
			return nil, bad("unknown record")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench: reading harness output: %w", err)
	}
	var missing []string
	if res.Version == "" {
		missing = append(missing, "version")
	}
	if res.Compiler == "" {
		missing = append(missing, "compiler")
	}
	if !checked {
		missing = append(missing, "check ok")
	}
	for _, op := range Ops {
		if _, ok := res.MedianMS(op); !ok {
			missing = append(missing, op)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("bench: harness output incomplete: no %s", strings.Join(missing, ", "))
	}
	return res, nil
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

// Run runs a compiled harness with calls timed calls per operation and
// parses its output. A failed correctness check is an error carrying the
// harness's message.
func Run(ctx context.Context, bin string, calls int) (*Result, error) {
	out, err := proc.Output(ctx, proc.Cmd{Args: []string{bin, "-n", strconv.Itoa(calls)}, Env: []string{"LANG=C", "LC_ALL=C"}})
	if err != nil {
		return nil, fmt.Errorf("bench: run harness %s: %w", bin, err)
	}
	res, err := Parse(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("bench: run harness %s: %w", bin, err)
	}
	return res, nil
}

// Server is a harness started with -serve: set up and checked once, then
// asked for one short slice of one operation at a time.
type Server struct {
	Result // the identification lines; Ops stays empty
	bin    string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr bytes.Buffer
}

// Serve starts bin -serve and reads its identification and correctness
// check; a failed check is an error carrying the harness's message.
func Serve(ctx context.Context, bin string) (*Server, error) {
	s := &Server{bin: bin}
	s.cmd = exec.CommandContext(ctx, bin, "-serve")
	s.cmd.Env = []string{"LANG=C", "LC_ALL=C"}
	s.cmd.Stderr = &s.stderr
	in, err := s.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: serve %s: %w", bin, err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: serve %s: %w", bin, err)
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: serve %s: %w", bin, err)
	}
	s.in, s.out = in, bufio.NewScanner(out)
	var head strings.Builder
	for s.out.Scan() {
		head.WriteString(s.out.Text() + "\n")
		if s.out.Text() == "check\tok" {
			break
		}
	}
	if !strings.HasSuffix(head.String(), "check\tok\n") {
		return nil, s.fail(fmt.Errorf("no \"check ok\" after %q", head.String()))
	}
	for _, line := range strings.Split(strings.TrimSpace(head.String()), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		if dst := s.idents()[k]; dst != nil {
			*dst = v
		}
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
