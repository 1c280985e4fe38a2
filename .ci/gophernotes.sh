#!/usr/bin/env bash
# Installs gophernotes, the other Go kernel for Jupyter, so that
# notebooks/gophernotes_test.go executes rns_marked_reversal.gophernotes.ipynb
# (it skips where no gophernotes kernel is installed). Jupyter itself comes
# from .ci/notebook.sh. Exits non-zero, saying what failed, when something
# cannot be installed; .ci/run goes on without it.
#
# gophernotes' last release, v0.7.5 (2022), panics at start with the newer
# gomacro that Go 1.26 needs (its display package's proxy for JSONer returns
# a string where the interface returns a map), and the old gomacro it pins
# does not build on Go 1.26. Its master branch has both fixed. This script
# tries "go install github.com/gopherdata/gophernotes@master" first; where
# the module proxy does not serve it, it builds v0.7.5 with the newest
# gomacro the proxy serves and that one-line fix, which is what master
# holds. Either way the kernel runs with GODEBUG=gotypesalias=0 (gomacro
# does not handle the alias types that go/types reports since Go 1.23) and
# with a module proxy list that ends in an empty proxy (below), and needs
# cgo and a C compiler (Debian: build-essential) to build its plugins.
set -euo pipefail

GOMACRO_VERSION=v0.0.0-20260901205243-0df6c0cd20af # github.com/cosmos72/gomacro, newest pseudo-version
GOPHERNOTES_RELEASE=v0.7.5

die() {
	echo "gophernotes.sh: $*" >&2
	exit 1
}
say() { echo "gophernotes.sh: $*"; }

if ! command -v go >/dev/null 2>&1; then
	[ -x /usr/local/go/bin/go ] || die "the go command is not on PATH"
	export PATH="$PATH:/usr/local/go/bin"
fi
command -v jupyter >/dev/null 2>&1 || die "jupyter is not installed: run .ci/notebook.sh first"

# A C compiler, with cgo: gophernotes' interpreter imports the project as
# a Go plugin, which it builds with cgo (gophernotes itself speaks ZeroMQ
# in pure Go: no libzmq is needed).
cc="$(go env CC)"
[ "$(go env CGO_ENABLED)" = 1 ] && command -v "${cc%% *}" >/dev/null 2>&1 ||
	die "gophernotes builds the project as a Go plugin, which needs cgo and a C compiler ($cc; Debian: build-essential)"

gobin="$(go env GOBIN)"
if [ -z "$gobin" ]; then
	gopath="$(go env GOPATH)"
	gobin="${gopath%%:*}/bin"
fi
mkdir -p "$gobin"

if [ -x "$gobin/gophernotes" ] && go version -m "$gobin/gophernotes" 2>/dev/null | grep -q "github.com/cosmos72/gomacro"; then
	say "gophernotes is installed ($gobin/gophernotes)"
elif GOBIN="$gobin" go install github.com/gopherdata/gophernotes@master 2>/dev/null; then
	say "installed gophernotes@master"
else
	say "the module proxy does not serve gophernotes@master; building $GOPHERNOTES_RELEASE with gomacro $GOMACRO_VERSION"
	tmp="$(mktemp -d)"
	trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
	# Proxies that refuse the sum database's look-ups for these modules
	# fail "go get"; their checksums are still checked against go.sum.
	export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/cosmos72/gomacro,github.com/gopherdata/gophernotes"
	out="$(
		cd "$tmp" &&
			go mod init gophernotes.sh/fetch 2>&1 &&
			go get "github.com/gopherdata/gophernotes@$GOPHERNOTES_RELEASE" 2>&1 &&
			go mod download -json "github.com/gopherdata/gophernotes@$GOPHERNOTES_RELEASE"
	)" || die "fetching gophernotes $GOPHERNOTES_RELEASE failed:
$out"
	srcdir="$(printf '%s\n' "$out" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' | tail -1)"
	[ -d "$srcdir" ] || die "no source directory for gophernotes $GOPHERNOTES_RELEASE"
	cp -r "$srcdir" "$tmp/src"
	chmod -R u+w "$tmp/src"
	# The fix of master: display.JSONer's JSON returns a map.
	sed -i 's/JSON_  func(interface{}) string/JSON_  func(interface{}) map[string]interface{}/; s/func (P \*proxy_JSONer) JSON() string {/func (P *proxy_JSONer) JSON() map[string]interface{} {/' "$tmp/src/x_package.go"
	grep -q 'JSON() map\[string\]interface{}' "$tmp/src/x_package.go" || die "could not patch x_package.go"
	out="$(
		cd "$tmp/src" &&
			go get "github.com/cosmos72/gomacro@$GOMACRO_VERSION" 2>&1 &&
			go build -o "$gobin/gophernotes" . 2>&1
	)" || die "building gophernotes failed:
$out"
	say "installed $gobin/gophernotes"
fi

# The kernel, registered with Jupyter, with GODEBUG=gotypesalias=0 and a
# module proxy list without "direct" that ends in an empty proxy: a proxy
# that refuses a module (some answer 403 for one they do not hold, such
# as this unpublished project) then falls through to one that reads as
# "not found", so that the replace directive that gophernotes writes for
# the local module applies (with "direct", a failed fetch from version
# control ends the look-up instead).
dir="$(jupyter --data-dir)/kernels/gophernotes"
mkdir -p "$dir/empty-proxy"
goproxy="$(go env GOPROXY)"
proxies="$(printf '%s\n' "$goproxy" | tr ',|' '\n\n' | grep -v -x -e direct -e off -e '' | paste -sd'|' -)" || true
[ -n "$proxies" ] && goproxy="$proxies|file://$dir/empty-proxy"
cat >"$dir/kernel.json" <<JSON
{
    "argv": ["$gobin/gophernotes", "{connection_file}"],
    "display_name": "Go (gophernotes)",
    "language": "go",
    "name": "gophernotes",
    "env": {"GODEBUG": "gotypesalias=0", "GOPROXY": "$goproxy"}
}
JSON
jupyter kernelspec list 2>/dev/null | awk '$1 == "gophernotes" { found = 1 } END { exit !found }' ||
	die "wrote $dir/kernel.json, but 'jupyter kernelspec list' has no gophernotes"
say "ready: the gophernotes kernel ($dir)"

# Warm-up: the notebook's first execution in gophernotes builds a plugin of
# the project and gonum/plot (up to a quarter of an hour on a fresh machine),
# which would not fit in go test's default 10-minute limit per package. Run
# the notebook test once here, under a limit of its own, so that the build
# cache holds the plugin's packages when go test ./... runs it again. If it
# fails here, the kernel is removed, so that the test is skipped rather than
# failing on a tool that could not be set up.
if [ -z "${GOPHERNOTES_NO_WARMUP:-}" ]; then
	root="$(cd "$(dirname "$0")/.." && pwd)"
	say "warming up: executing the notebook once in gophernotes"
	if ! (cd "$root" && timeout 2700 go test ./notebooks/ -run '^TestNotebookGophernotes$' -count=1 -timeout 45m >/dev/null 2>&1); then
		jupyter kernelspec remove -f gophernotes >/dev/null 2>&1 || true
		die "the notebook does not run in gophernotes here; its kernel is removed, so that its test is skipped"
	fi
	say "the notebook runs in gophernotes"
fi
