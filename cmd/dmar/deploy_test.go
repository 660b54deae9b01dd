package main

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The image is built with the same steps as .ci/run: `make test` and
// `make demo` run scripts/setup.sh (make setup) and `go build -o bin/dmar
// ./cmd/dmar` (make build); the Dockerfile must RUN exactly those.
func TestDockerfileBuildsLikeCI(t *testing.T) {
	ci := readRepoFile(t, ".ci/run")
	if !regexp.MustCompile(`(?m)^make test\b`).MatchString(ci) {
		t.Fatalf(".ci/run no longer runs `make test`; update this test:\n%s", ci)
	}
	mk := readRepoFile(t, "Makefile")
	target := func(name string) []string {
		m := regexp.MustCompile(`(?ms)^` + name + `:[^\n]*\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(mk)
		if m == nil {
			t.Fatalf("Makefile has no %s target", name)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(m[1]), "\n") {
			out = append(out, strings.ReplaceAll(strings.TrimSpace(l), "$(GO)", "go"))
		}
		return out
	}
	if !strings.Contains(regexp.MustCompile(`(?m)^test:.*$`).FindString(mk), "setup") {
		t.Error("make test does not depend on setup")
	}
	var runs []string
	for _, m := range regexp.MustCompile(`(?m)^RUN (.*)$`).FindAllStringSubmatch(readRepoFile(t, "Dockerfile"), -1) {
		runs = append(runs, strings.TrimSpace(m[1]))
	}
	for _, step := range append(target("setup"), target("build")...) {
		found := false
		for _, r := range runs {
			found = found || r == step
		}
		if !found {
			t.Errorf("the Dockerfile does not RUN %q (a step of make setup/build); its RUN lines: %q", step, runs)
		}
	}
}

// The compose file is valid: `docker compose config` (Compose v2, installed
// by scripts/install-compose.sh), else Debian's docker-compose 1.29.
func TestComposeFileIsValid(t *testing.T) { composeConfig(t) }

// composeConfig runs `docker compose [-f FILE]... config -q` in the
// repository and returns what it printed.
func composeConfig(t *testing.T, files ...string) string {
	t.Helper()
	args := []string{"compose"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	args = append(args, "config", "-q")
	bin, err := exec.LookPath("docker")
	if err == nil && exec.Command(bin, "compose", "version").Run() != nil {
		err = errors.New("no compose plugin")
	}
	if err != nil {
		if bin, err = exec.LookPath("docker-compose"); err != nil {
			t.Skip("neither `docker compose` nor docker-compose is installed (scripts/install-compose.sh installs the first)")
		}
		args = args[1:]
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, out)
	}
	return string(out)
}
