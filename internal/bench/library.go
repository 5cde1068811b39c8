package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/osslbuild/osslbuild/internal/binary/inspect"
	"github.com/osslbuild/osslbuild/internal/proc"
)

// Path is which kind of code computes an operation on linux-x86_64 in
// OpenSSL 4.0.2, and where that was read from the sources. -O0 slows C
// code; assembly is the same either way (only the C glue around it is
// affected).
type Path struct {
	Kind     string // "C" or "assembly"
	Evidence string
}

// Paths were checked against openssl-4.0.2 (Configurations and build.info
// files, the sources, and the member list of the linux-x86_64 libcrypto.a;
// TestAssemblyPathsAreLinked keeps the assembly claims honest).
var Paths = map[string]Path{
	"ML-KEM-768 encapsulate": {"C", "crypto/ml_kem/ml_kem.c, no assembly in crypto/ml_kem (its SHA3/SHAKE calls reach the keccak1600 assembly)"},
	"ML-KEM-768 decapsulate": {"C", "as encapsulate"},
	"ML-DSA-65 sign":         {"C", "crypto/ml_dsa/*.c, no assembly in crypto/ml_dsa (SHAKE via keccak1600 assembly)"},
	"ML-DSA-65 verify":       {"C", "as sign"},
	"Ed25519 sign":           {"C", "crypto/ec/curve25519.c: Ed25519 uses the ref10 base 2^25.5 field code in C; X25519_ASM (x25519-x86_64) serves only X25519's base 2^51/2^64 code; SHA-512 is assembly"},
	"ECDSA P-256 sign":       {"assembly", "crypto/ec/build.info: ECP_NISTZ256_ASM with ecp_nistz256-x86_64.s (field, point and order arithmetic); ecp_nistz256.c and the ECDSA/BN glue are C"},
	"SHA3-256 64 KiB":        {"assembly", "crypto/sha/build.info: KECCAK1600_ASM with keccak1600-x86_64.s"},
}

// Build describes one of the two builds compared.
type Build struct {
	Name     string // "osslbuild" or "pyca way"
	Artifact string // artifact directory (include/, lib/)
	Version  string // as the library reports it
	Compiler string // libcrypto's "compiler:" line, as the library reports it
	Opt      string // effective optimisation from that line
}

// Row is one operation's comparison.
type Row struct {
	Op          string
	Path        Path
	OsslbuildMS float64 // median of osslbuild's slice times (CPU ms per call)
	PycaWayMS   float64 // likewise for the pyca way
	Ratio       float64 // median of the pair ratios (pyca way / osslbuild): how many times slower
	Paired      *Paired // the pairs, the interval, why sampling stopped
}

// Table is the result of Library.
type Table struct {
	SliceMS            float64
	MinPairs, MaxPairs int
	Tolerance          float64
	Osslbuild, PycaWay Build
	Rows               []Row
	Machine            Machine
	Started, Finished  time.Time
	LoadAfter          string
}

// Noisy lists the operations whose interval stayed wider than the
// tolerance: their ratios are not a conclusion.
func (t *Table) Noisy() []string {
	var out []string
	for _, r := range t.Rows {
		if r.Paired != nil && !r.Paired.Narrow {
			out = append(out, r.Op)
		}
	}
	return out
}

// Library builds Options.Settings.Version for linux-x86_64 twice
// (Osslbuild and PycaWay, each from its cache when unchanged), compiles the
// harness against both, starts both (-serve) and measures each operation
// pair by pair (measure): short slices alternated between the builds, the
// median ratio with its 95% interval, more pairs until it is narrow.
func Library(ctx context.Context, o Options) (*Table, error) {
	o.defaults()
	a, err := Osslbuild(ctx, o)
	if err != nil {
		return nil, err
	}
	b, err := PycaWay(ctx, o)
	if err != nil {
		return nil, err
	}
	if cl, err := LibcryptoCompilerLine(a); err != nil {
		return nil, err
	} else if !cl.Opt.AtLeast(inspect.O3) {
		return nil, fmt.Errorf("bench: osslbuild libcrypto in %s is %s, not -O3: compiler: %s", a, cl.Opt, cl.Raw)
	}
	if err := os.MkdirAll(o.Settings.Work, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	bin, err := os.MkdirTemp(o.Settings.Work, "bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: harness directory: %w", err)
	}
	defer os.RemoveAll(bin)
	t := &Table{SliceMS: o.SliceMS, MinPairs: o.MinPairs, MaxPairs: o.MaxPairs, Tolerance: o.Tolerance,
		Osslbuild: Build{Name: "osslbuild", Artifact: a},
		PycaWay:   Build{Name: "pyca way", Artifact: b}}
	var servers []*Server
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	for _, x := range []*Build{&t.Osslbuild, &t.PycaWay} {
		exe := filepath.Join(bin, strings.ReplaceAll(x.Name, " ", "-"))
		if err := Compile(ctx, o.CC, o.Harness, x.Artifact, exe); err != nil {
			return nil, err
		}
		s, err := Serve(ctx, exe)
		if err != nil {
			return nil, fmt.Errorf("bench: %s build: %w", x.Name, err)
		}
		servers = append(servers, s)
		x.Version, x.Compiler = s.Version, s.Compiler
		x.Opt = inspect.ParseCompilerLine(s.Compiler).Opt.String()
	}
	t.Machine = Describe(ctx)
	t.Started = time.Now()
	for _, op := range Ops {
		p, err := measure(ctx, servers[0], servers[1], op, o)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", op, err)
		}
		row := Row{Op: op, Path: Paths[op], OsslbuildMS: Median(p.A), PycaWayMS: Median(p.B), Ratio: p.Ratio, Paired: p}
		fmt.Fprintf(o.Runtime.Log, "bench: %s: %.2fx (95%% interval %.2f-%.2f, %d pairs of %d calls): %s\n",
			op, p.Ratio, p.Lo, p.Hi, len(p.Ratios), p.Calls, p.Stopped)
		t.Rows = append(t.Rows, row)
	}
	t.Finished = time.Now()
	t.LoadAfter = loadavg()
	return t, nil
}

// Markdown renders the comparison table.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Operation | OpenSSL path | osslbuild (CPU ms) | pyca way (CPU ms) | pyca way / osslbuild | 95%% interval | pairs |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range t.Rows {
		ratio, interval, pairs := fmt.Sprintf("%.2fx", r.Ratio), "-", "-"
		if p := r.Paired; p != nil {
			interval, pairs = fmt.Sprintf("%.2f-%.2f", p.Lo, p.Hi), fmt.Sprint(len(p.Ratios))
			if !p.Narrow {
				ratio += " (too noisy)"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Op, r.Path.Kind, ms(r.OsslbuildMS), ms(r.PycaWayMS), ratio, interval, pairs)
	}
	return b.String()
}

// ms prints a time with about four significant digits.
func ms(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	case v >= 1:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}

// Report is the whole result file: when, where, how, what was compared,
// the table, how each operation's sampling ended, and why the paths are
// what they are.
func (t *Table) Report(command string) string {
	var b strings.Builder
	ver := t.Osslbuild.Version
	if f := strings.Fields(ver); len(f) > 1 {
		ver = f[1]
	}
	fmt.Fprintf(&b, "# Library speed: osslbuild vs the pyca way, OpenSSL %s, linux-x86_64\n\n", ver)
	fmt.Fprintf(&b, "- Date: %s (measured %s to %s)\n", t.Started.UTC().Format("2006-01-02"), t.Started.UTC().Format("15:04:05"), t.Finished.UTC().Format("15:04:05 MST"))
	fmt.Fprintf(&b, "- Machine: %s; %s; load average before %s, after %s\n", t.Machine.Model, t.Machine.CPUs, t.Machine.Load, t.LoadAfter)
	fmt.Fprintf(&b, "- Command: `%s`\n", command)
	fmt.Fprintf(&b, "- Method: bench/osslbench.c linked statically against each build's libcrypto.a; both harnesses run side by side (`-serve`) and each operation alternates slices of about %.0f ms (on the osslbuild side; the same calls on both, in whole cycles of %d, so every slice does the same mix of work) between them, A B then B A, so both builds meet the same moments of the machine's load. Each cycle of a slice is timed in the harness thread's CPU time (CLOCK_THREAD_CPUTIME_ID: other processes' turns on the CPU do not count), and the slice gives its median cycle's time per call; each pair gives a ratio (pyca way / osslbuild); the table gives the median ratio and its distribution-free 95%% confidence interval, sampled in steps of 5 pairs from %d until the interval lies within ±%.0f%% of the median, or %d pairs, after which the operation is marked too noisy to conclude. Each call is a fresh context, init, the operation, free. ML-KEM and ML-DSA keys come from fixed seeds and ML-DSA signs deterministically, call j of a slice message j mod %d, the same in both builds and every run (bench/README.md).\n", t.SliceMS, harnessCycle, t.MinPairs, 100*t.Tolerance, t.MaxPairs, harnessCycle)
	fmt.Fprintf(&b, "- pyca way: the same verified sources, toolchain and Configure argv, with `CFLAGS=%s` in Configure's environment (it replaces OpenSSL's `-Wall -O3`; the flag itself is already in the target's CNF_CFLAGS, so nothing else changes), built with `make build_libs` and `make install_dev`, no gate.\n\n", PycaCFLAGS)
	for _, x := range []Build{t.Osslbuild, t.PycaWay} {
		fmt.Fprintf(&b, "%s (%s, effective %s):\n\n    %s\n\n", x.Name, x.Version, x.Opt, x.Compiler)
	}
	b.WriteString(t.Markdown())
	if noisy := t.Noisy(); len(noisy) > 0 {
		fmt.Fprintf(&b, "\nToo noisy to conclude: %s (the machine's load moved too much within pairs).\n", strings.Join(noisy, ", "))
	}
	b.WriteString("\nHow each operation was sampled (calls per slice; quartiles of the single-pair ratios; why sampling stopped):\n\n")
	for _, r := range t.Rows {
		if p := r.Paired; p != nil {
			fmt.Fprintf(&b, "- %s: %d calls per slice; pair ratios %.2f / %.2f / %.2f (quartiles); %s\n", r.Op, p.Calls, p.Q1, p.Ratio, p.Q3, p.Stopped)
		}
	}
	b.WriteString("\nOpenSSL paths on linux-x86_64 (checked in the 4.0.2 sources):\n\n")
	for _, op := range Ops {
		p := Paths[op]
		fmt.Fprintf(&b, "- %s: %s. %s\n", op, p.Kind, p.Evidence)
	}
	return b.String()
}

// WriteLibraryReport runs Library and writes its Report to
// <dir>/library-<UTC date>.md, returning that path. command is how the run
// was started, recorded in the report (e.g. "go tool mage bench:library").
func WriteLibraryReport(ctx context.Context, o Options, dir, command string) (string, error) {
	t, err := Library(ctx, o)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "library-"+t.Started.UTC().Format("2006-01-02")+".md")
	if err := os.WriteFile(path, []byte(t.Report(command)), 0o644); err != nil {
		return "", fmt.Errorf("bench: write report: %w", err)
	}
	return path, nil
}

// Machine describes where a measurement ran.
type Machine struct {
	Model string // lscpu "Model name"
	CPUs  string // e.g. "2 CPUs (1 core per socket, 2 threads per core)"
	Load  string // /proc/loadavg's 1, 5 and 15 minute averages
}

// Describe reads lscpu and /proc/loadavg; what it cannot read it says so
// rather than failing the measurement.
func Describe(ctx context.Context) Machine {
	m := Machine{Model: "unknown CPU", CPUs: fmt.Sprintf("%d CPUs (runtime.NumCPU)", runtime.NumCPU()), Load: loadavg()}
	out, err := proc.Output(ctx, proc.Cmd{Args: []string{"lscpu"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}})
	if err != nil {
		return m
	}
	f := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			f[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if v := f["Model name"]; v != "" {
		// A VM's model name can be as vague as "AMD EPYC": family and
		// model say which generation it is.
		m.Model = fmt.Sprintf("%s (CPU family %s, model %s)", v, f["CPU family"], f["Model"])
		if h := f["Hypervisor vendor"]; h != "" {
			m.Model += ", " + h + " guest"
		}
	}
	if v := f["CPU(s)"]; v != "" {
		m.CPUs = fmt.Sprintf("%s CPUs (cores per socket: %s, threads per core: %s)", v, f["Core(s) per socket"], f["Thread(s) per core"])
	}
	return m
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg") // none where it cannot be read
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
