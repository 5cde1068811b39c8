package workflows

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/osslbuild/osslbuild/internal/testsupport/testfixture"
)

// actionYML is action.yml, as much of it as the runner reads for a
// composite action.
type actionYML struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Required    bool    `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`

	dir string // the action's directory: github.action_path
}

type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
}

func actionPath() string { return filepath.Join(testfixture.RepoRoot(), "action.yml") }

// loadAction parses action.yml strictly: a key the runner would not read
// is an error here.
func loadAction(t testing.TB) *actionYML { return loadActionFile(t, actionPath()) }

// loadActionFile parses the action.yml at path (the repository's own, or
// check/action.yml), whose directory is its github.action_path.
func loadActionFile(t testing.TB, path string) *actionYML {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var a actionYML
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	a.dir = filepath.Dir(path)
	return &a
}

// exprRe is a ${{ ... }} expression.
var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces each ${{ key }} in s by vars[key]. Only plain context
// references are understood; anything else is an error, so the files
// under test stay within what this harness evaluates faithfully. A step
// output that was never set is "", as in Actions.
func expand(s string, vars map[string]string) (string, error) {
	var bad error
	out := exprRe.ReplaceAllStringFunc(s, func(m string) string {
		key := exprRe.FindStringSubmatch(m)[1]
		if v, ok := vars[key]; ok {
			return v
		}
		if strings.HasPrefix(key, "steps.") && strings.Count(key, ".") == 3 && strings.Split(key, ".")[2] == "outputs" {
			return ""
		}
		if bad == nil {
			bad = fmt.Errorf("expression %q in %q: not one this harness evaluates (it knows %s)", m, s, strings.Join(slices.Sorted(maps.Keys(vars)), ", "))
		}
		return m
	})
	return out, bad
}

// parseFileCommand reads a GitHub Actions file command (GITHUB_OUTPUT,
// GITHUB_ENV): name=value lines and name<<DELIMITER blocks.
func parseFileCommand(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return map[string]string{}, nil
		}
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				val = append(val, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("%s: %s<<%s not closed", path, name, delim)
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: line %q is neither name=value nor name<<DELIMITER", path, line)
		}
		out[name] = val
	}
	return out, sc.Err()
}

// invocation is one use of the action by a job: its inputs, and the
// directories the runner gives the job.
type invocation struct {
	name      string
	inputs    map[string]string
	workspace string   // GITHUB_WORKSPACE: the consumer's checkout
	temp      string   // RUNNER_TEMP
	env       []string // the job's environment
}

// result is what a job sees of the action.
type result struct {
	outputs map[string]string
	summary string // what the steps appended to GITHUB_STEP_SUMMARY
	log     string // every step's stdout and stderr
	err     error
}

// runAction runs the action's steps the way the runner runs a composite
// action: each run: script with bash --noprofile --norc -eo pipefail in its
// working directory, with the step's env (expressions evaluated), fresh
// GITHUB_OUTPUT, GITHUB_ENV and GITHUB_STEP_SUMMARY files per step, earlier
// steps' GITHUB_ENV exported to later ones, and the action's outputs
// evaluated from the steps' outputs at the end. uses: steps are skipped
// (actions/setup-go: Go is already on this machine). It stops at the
// first failing step, as the runner does.
func (a *actionYML) run(ctx context.Context, inv invocation) result {
	var log, summary strings.Builder
	res := result{outputs: map[string]string{}}
	fail := func(err error) result {
		res.err, res.log, res.summary = err, log.String(), summary.String()
		return res
	}
	for k := range inv.inputs {
		if _, ok := a.Inputs[k]; !ok {
			return fail(fmt.Errorf("input %q is not one of action.yml's", k))
		}
	}
	vars := map[string]string{
		"github.action_path":       a.dir,
		"github.workspace":         inv.workspace,
		"github.action_repository": "osslbuild/osslbuild",
		"github.action_ref":        "",
		"runner.temp":              inv.temp,
	}
	for name, in := range a.Inputs {
		v, given := inv.inputs[name]
		if !given && in.Required {
			return fail(fmt.Errorf("required input %q not given", name))
		}
		if !given && in.Default != nil {
			v = *in.Default
		}
		vars["inputs."+name] = v
	}
	files := filepath.Join(inv.temp, "_runner_file_commands")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return fail(err)
	}
	var exported []string
	for i, st := range a.Runs.Steps {
		label := st.Name
		if label == "" {
			label = st.Uses
		}
		fmt.Fprintf(&log, "##[step %d] %s\n", i, label)
		if st.Uses != "" {
			fmt.Fprintf(&log, "(skipped: uses %s; Go is on this machine)\n", st.Uses)
			continue
		}
		if st.If != "" {
			return fail(fmt.Errorf("step %d: if: is not evaluated by this harness", i))
		}
		if st.Shell != "bash" {
			return fail(fmt.Errorf("step %d: shell %q, want bash", i, st.Shell))
		}
		dir := inv.workspace
		if st.WorkingDirectory != "" {
			d, err := expand(st.WorkingDirectory, vars)
			if err != nil {
				return fail(err)
			}
			dir = d
		}
		n := strconv.Itoa(i)
		out, envf, sum, script := filepath.Join(files, "set_output_"+n), filepath.Join(files, "set_env_"+n),
			filepath.Join(files, "step_summary_"+n), filepath.Join(files, "step_"+n+".sh")
		if err := os.WriteFile(script, []byte(st.Run), 0o644); err != nil {
			return fail(err)
		}
		env := append(slices.Clone(inv.env),
			"GITHUB_ACTIONS=true",
			"GITHUB_ACTION_PATH="+vars["github.action_path"],
			"GITHUB_WORKSPACE="+inv.workspace,
			"RUNNER_TEMP="+inv.temp,
			"GITHUB_OUTPUT="+out,
			"GITHUB_ENV="+envf,
			"GITHUB_STEP_SUMMARY="+sum,
		)
		env = append(env, exported...)
		for _, k := range slices.Sorted(maps.Keys(st.Env)) {
			v, err := expand(st.Env[k], vars)
			if err != nil {
				return fail(fmt.Errorf("step %d env %s: %w", i, k, err))
			}
			env = append(env, k+"="+v)
		}
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir, cmd.Env = dir, env
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		log.Write(buf.Bytes())
		if b, rerr := os.ReadFile(sum); rerr == nil {
			summary.Write(b)
		}
		if err != nil {
			return fail(fmt.Errorf("step %d (%s): %w", i, label, err))
		}
		outs, err := parseFileCommand(out)
		if err != nil {
			return fail(err)
		}
		if st.ID != "" {
			for k, v := range outs {
				vars["steps."+st.ID+".outputs."+k] = v
			}
		}
		envs, err := parseFileCommand(envf)
		if err != nil {
			return fail(err)
		}
		for _, k := range slices.Sorted(maps.Keys(envs)) {
			exported = append(exported, k+"="+envs[k])
		}
	}
	for name, o := range a.Outputs {
		v, err := expand(o.Value, vars)
		if err != nil {
			return fail(fmt.Errorf("output %s: %w", name, err))
		}
		res.outputs[name] = v
	}
	res.log, res.summary = log.String(), summary.String()
	return res
}

// jobEnv is the test's environment without anything of a GitHub Actions
// run this test may itself be running in, plus extra.
func jobEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GITHUB_") || strings.HasPrefix(kv, "RUNNER_") || strings.HasPrefix(kv, "OSSLBUILD_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}
