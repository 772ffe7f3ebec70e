# folio — make demo runs the main job on bundled data, make test runs every test.
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin/folio
DEMO_DIR ?= $(CURDIR)/bin/demo

.PHONY: build demo test deps vet bench fuzz man clean

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# build makes a static binary (CGO_ENABLED=0): it runs on any Linux, needs
# no libc of a given version, and starts about 5 ms sooner (no dynamic
# loader, no cgo runtime), which every command pays, a search included.
# The tests build with cgo, which -race needs.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/folio

demo: build
	rm -rf $(DEMO_DIR)
	$(BIN) demo --out $(DEMO_DIR)

# deps installs what the tests need: Debian's chromium for the browser tests,
# Debian's postgresql (initdb, pg_ctl) for the shared queue tests,
# wget for the example hook's test, strace for folio-bench's stat counts, and in
# bin/test-tools (never shipped) the
# npm packages the WARC and WACZ tests check folio's output with: warcio, and
# ReplayWeb.page's prebuilt ui.js and sw.js (npm pack: its bundles need none
# of its dependencies), and Lighthouse, which audits the served site (in its
# own folder: an npm install --no-save prunes what another one installed). apt-get waits up to ten minutes for another apt-get's
# lock instead of failing.
TEST_TOOLS := bin/test-tools
deps:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (needed by the browser tests)"; \
		apt-get -o DPkg::Lock::Timeout=600 install -y chromium >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y chromium; }; }
	@command -v wget >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 install -y wget >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y wget; }
	@command -v strace >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 install -y strace >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y strace; }
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql (the shared job queue tests start a server of their own)"; \
		apt-get -o DPkg::Lock::Timeout=600 install -y postgresql >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y postgresql; }; }
	@command -v npm >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 install -y nodejs npm >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=600 update >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y nodejs npm; }
	@grep -qs '"version": "2.4.11"' $(TEST_TOOLS)/node_modules/warcio/package.json || { \
		mkdir -p $(TEST_TOOLS) && npm install --prefix $(TEST_TOOLS) --no-save --no-audit --no-fund warcio@2.4.11 >/dev/null; }
	@grep -qs '"version": "2.5.3"' $(TEST_TOOLS)/replaywebpage/package.json || { \
		mkdir -p $(TEST_TOOLS)/replaywebpage && cd $(TEST_TOOLS) && npm pack --silent replaywebpage@2.5.3 >/dev/null && \
		tar xzf replaywebpage-2.5.3.tgz -C replaywebpage --strip-components=1 && rm replaywebpage-2.5.3.tgz; }
	@grep -qs '"version": "12.2.3"' $(TEST_TOOLS)/lighthouse/node_modules/lighthouse/package.json || { \
		mkdir -p $(TEST_TOOLS)/lighthouse && npm install --prefix $(TEST_TOOLS)/lighthouse --no-save --no-audit --no-fund lighthouse@12.2.3 >/dev/null; }

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

test: deps vet
	CI=$${CI:-1} $(GO) test -race -timeout 30m ./...

# bench measures the speed goals of PRODUCT.md against baselines taken in the
# same run (cat, find -newer, cp -a, hugo; strace counts the no-change stats);
# N sets the collection size.
N ?= 100000
bench: build
	@command -v hugo >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 install -y hugo >/dev/null 2>&1 || true
	@command -v strace >/dev/null 2>&1 || apt-get -o DPkg::Lock::Timeout=600 install -y strace >/dev/null 2>&1 || true
	@command -v single-file >/dev/null 2>&1 || npm install -g single-file-cli >/dev/null 2>&1 || true
	$(GO) run ./cmd/folio-bench -n $(N)

# man writes a man page per command (cobra's generator, the --help text),
# with a build of folio that has the generator (-tags man, see genman.go).
man:
	CGO_ENABLED=0 $(GO) build -tags man -ldflags "-X main.version=$(VERSION)" -o bin/folio-man ./cmd/folio
	bin/folio-man gen man man

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParseIndex -fuzztime 30s ./archive
	$(GO) test -run '^$$' -fuzz FuzzParseLegacyIndex -fuzztime 30s ./archive

clean:
	rm -rf bin
