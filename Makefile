# svc-ingest — every target installs what it needs first (only Node 20+ and npm are assumed).
SHELL := /bin/bash
# The sbin folders last: the tests that run the units and install the .deb as root call useradd, chroot and dpkg (which
# wants ldconfig), and an environment like cron's or `env -i` leaves them off PATH.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH):/usr/local/sbin:/usr/sbin:/sbin
STAMP := node_modules/.installed

.PHONY: setup build package dist dist-arm64 deb rpm image test-dist bench-install typecheck lint format test coverage coverage-gate demo demo-cluster postgres bench clean

setup: $(STAMP)

# npm ci only: the committed lockfile is the install. If it fails, the lockfile is out of date with
# package.json: fix that with `npm install` and commit package-lock.json; never rewrite it here.
$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@node -e 'const [M,m]=process.versions.node.split(".").map(Number); if (M<23 && !(M===22 && m>=18)) { console.error("project Node is " + process.version + "; expected >= 22.18"); process.exit(1) }'
	@touch $(STAMP)

# The JavaScript an installed package runs (dist/; the clone itself runs the sources, no build needed).
build: $(STAMP)
	npm run --silent build

# svc-ingest-<version>.tgz, what `npm install -g` takes (docs/install.md); npm pack builds first (prepack).
package: $(STAMP)
	npm pack --silent

# The single executable, the .deb, the .rpm and the container image (docs/install.md), all in .out/dist/ (never
# committed). Each target installs the Debian tools it uses (packaging/need.sh). The executable is built again each
# time: the commit it carries may have changed.
VERSION := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' package.json)
DIST := .out/dist
EXE := $(DIST)/svc-ingest-$(VERSION)-linux-x64

dist: $(STAMP)
	packaging/need.sh strip:binutils git:git
	node packaging/sea.ts

# linux-arm64: the same bundle injected into npm's linux-arm64 Node of the same version (not run here: no arm64).
dist-arm64: $(STAMP)
	packaging/need.sh strip:binutils git:git
	node packaging/sea.ts --arch arm64 --node "$$(packaging/node-arm64.sh $(DIST))"

deb: dist
	packaging/deb.sh $(EXE) $(VERSION) $(DIST)

rpm: dist
	packaging/need.sh rpmbuild:rpm
	packaging/rpm.sh $(EXE) $(VERSION) $(DIST)

image: dist
	packaging/need.sh umoci:umoci
	packaging/image.sh $(EXE) $(VERSION) $(DIST)

# The tests that build and run each of them (test/dist/), and the shipped artefacts run as their users run them
# (test/helpers/tiers.ts): not part of `make test` (minutes, not seconds; CI runs both).
test-dist: dist deb rpm image
	packaging/need.sh lintian:lintian rpmlint:rpmlint
	[ -t 1 ] || export NO_COLOR=1; vitest run --config test/vitest.dist.config.ts $(VITEST_ARGS)

# Sizes and start-up CPU/RSS of each install way (test/bench/install-ways.ts; docs/install.md has the figures).
bench-install: dist deb rpm image
	node packaging/sea.ts --no-code-cache --out $(DIST)/no-code-cache
	rm -f $(DIST)/svc-ingest-*.tgz && npm pack --silent --pack-destination $(DIST) >/dev/null
	node test/bench/install-ways.ts $(BENCH_ARGS)

typecheck: $(STAMP)
	tsc --noEmit -p tsconfig.json

lint: $(STAMP)
	biome check src test
	tsc --noEmit -p tsconfig.json

format: $(STAMP)
	biome format --write src test

# Off a terminal (piped, CI, a log file) no colour escape codes: vitest colours unless NO_COLOR is set.
test: $(STAMP)
	[ -t 1 ] || export NO_COLOR=1; vitest run --config test/vitest.config.ts $(VITEST_ARGS)

# The suite with coverage of src/ (@vitest/coverage-v8; the CLI's child processes are not measured): a summary, and
# the floor (test/helpers/coverage-floor.ts) checked (docs/testing.md has the figure). Not part of `make test` (~1.6x
# its time); CI checks the floor with coverage-gate below.
# The false-positive scan's time bounds (test/mask/false-positives.test.ts) do not hold under V8's counters: left out.
coverage: $(STAMP)
	[ -t 1 ] || export NO_COLOR=1; vitest run --config test/vitest.config.ts --coverage --exclude test/mask/false-positives.test.ts $(VITEST_ARGS)

# CI's coverage gate (.ci/run, after make test): the same run under coverage, its output in .out/coverage-run.log
# (vitest empties .out/coverage/ first) and its tests not judged again (make test ran and counted them; a test timed
# for a run without V8's counters may fail under them), then the summary checked against the floor
# (test/helpers/coverage-gate.ts): one line, exit 1 under it.
coverage-gate: $(STAMP)
	mkdir -p .out && rm -f .out/coverage/coverage-summary.json
	-NO_COLOR=1 vitest run --config test/vitest.config.ts --coverage --coverage.reporter=text-summary --coverage.reporter=json-summary --exclude test/mask/false-positives.test.ts > .out/coverage-run.log 2>&1; grep -E '^ +(Test Files|Tests) ' .out/coverage-run.log
	node test/helpers/coverage-gate.ts .out/coverage/coverage-summary.json

demo: $(STAMP)
	node src/cli/demo.ts

# A backfill split across three workers on a throwaway PostgreSQL (from npm), one of them killed -9 mid-way.
demo-cluster: $(STAMP)
	node test/demo/cluster.ts

# A local PostgreSQL from npm to try the shared ledger with (README "More than one machine"), until Ctrl-C.
postgres: $(STAMP)
	node test/demo/postgres.ts

bench: $(STAMP)
	node test/bench/run.ts $(BENCH_ARGS)

clean:
	rm -rf node_modules ledger .out dist svc-ingest-*.tgz test/bench/.data test/bench/results
