#!/usr/bin/env bash
# Installs what notebooks/ needs to execute headlessly (notebooks/notebook_test.go
# runs it, and skips when any of it is missing):
#
#   - Debian's Jupyter: jupyter-core, jupyter-nbconvert (the "jupyter
#     nbconvert" command), python3-nbconvert, python3-ipykernel and
#     jupyter-client (the "jupyter kernelspec" command);
#   - GoNB, the Go kernel, and the tools it runs: goimports and gopls, at
#     pinned versions, with "go install" into $(go env GOPATH)/bin (or GOBIN);
#   - the GoNB kernel registered with Jupyter ("gonb --install").
#
# Idempotent: what is present at the pinned version is left alone. Exits
# non-zero, saying what failed, when something cannot be installed.
#
# User-local mode: with NSRNN_NOTEBOOK_PREFIX=DIR set, nothing is installed
# system-wide and neither root nor sudo is needed: Jupyter, unless it is on
# PATH already, goes into a Python virtual environment DIR/venv (pip), the
# Go tools into DIR/bin (GOBIN), and the kernel into Jupyter's data
# directory DIR/share/jupyter (JUPYTER_DATA_DIR). Start Jupyter, and run
# the notebook tests, with the environment the script prints at the end.
# Unset (as in CI), the script behaves as described above.
set -euo pipefail

GONB_VERSION=v0.11.5  # github.com/janpfeifer/gonb
TOOLS_VERSION=v0.52.0 # golang.org/x/tools, for goimports
GOPLS_VERSION=v0.23.0 # golang.org/x/tools/gopls (v0.24.0 needs Go 1.27)
APT_PACKAGES=(jupyter-core jupyter-nbconvert python3-nbconvert python3-ipykernel jupyter-client)

die() {
	echo "notebook.sh: $*" >&2
	exit 1
}
say() { echo "notebook.sh: $*"; }

# The go command: on PATH, or where the project's machines have it.
if ! command -v go >/dev/null 2>&1; then
	[ -x /usr/local/go/bin/go ] || die "the go command is not on PATH (install Go 1.26 or later)"
	export PATH="$PATH:/usr/local/go/bin"
fi

prefix="${NSRNN_NOTEBOOK_PREFIX:-}"
if [ -n "$prefix" ]; then
	mkdir -p "$prefix" || die "NSRNN_NOTEBOOK_PREFIX: cannot create $prefix"
	prefix="$(cd "$prefix" && pwd)"
	export GOBIN="$prefix/bin"
	export JUPYTER_DATA_DIR="$prefix/share/jupyter"
	mkdir -p "$GOBIN" "$JUPYTER_DATA_DIR" || die "NSRNN_NOTEBOOK_PREFIX: cannot create $GOBIN and $JUPYTER_DATA_DIR"
	[ -x "$prefix/venv/bin/jupyter" ] && export PATH="$prefix/venv/bin:$PATH"
	say "user-local mode: Go tools into $GOBIN, Jupyter's data into $JUPYTER_DATA_DIR"
fi

# 1. Jupyter: Debian's packages, or in user-local mode a virtual
# environment under the prefix (unless jupyter nbconvert runs already).
missing=()
if [ -n "$prefix" ]; then
	if ! jupyter nbconvert --version >/dev/null 2>&1; then
		say "installing Jupyter (jupyter-core, nbconvert, ipykernel, jupyter-client) into $prefix/venv"
		python3 -m venv "$prefix/venv" ||
			die "python3 -m venv $prefix/venv failed (on Debian, the python3-venv package provides it)"
		"$prefix/venv/bin/pip" install -q jupyter-core nbconvert ipykernel jupyter-client ||
			die "pip install of Jupyter into $prefix/venv failed"
		export PATH="$prefix/venv/bin:$PATH"
	fi
	APT_PACKAGES=() # nothing system-wide
fi
for p in "${APT_PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	command -v apt-get >/dev/null 2>&1 ||
		die "missing ${missing[*]}, and there is no apt-get: install Jupyter (jupyter-core, nbconvert, ipykernel) by other means"
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "missing ${missing[*]}: run this script as root, or install sudo"
		sudo=(sudo)
	fi
	say "installing ${missing[*]}"
	"${sudo[@]}" apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "apt-get install ${missing[*]} failed"
fi
command -v jupyter >/dev/null 2>&1 || die "jupyter is not on PATH after installing ${APT_PACKAGES[*]:-Jupyter}"
jupyter nbconvert --version >/dev/null 2>&1 || die "'jupyter nbconvert' does not run"

# 2. GoNB, goimports and gopls, into GOBIN.
gobin="$(go env GOBIN)"
if [ -z "$gobin" ]; then
	gopath="$(go env GOPATH)"
	gobin="${gopath%%:*}/bin"
fi
export PATH="$gobin:$PATH"

# installed BINARY MODULE VERSION: whether $gobin/BINARY was built from
# MODULE at VERSION.
installed() {
	[ -x "$gobin/$1" ] && go version -m "$gobin/$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|$)"
}

gonb_installed=false
if installed gonb github.com/janpfeifer/gonb "$GONB_VERSION"; then
	say "gonb $GONB_VERSION is installed"
else
	say "installing gonb $GONB_VERSION"
	# "go install github.com/janpfeifer/gonb@VERSION" also looks the
	# module's version list up (for deprecation notices), and fails where a
	# proxy refuses that list; building it from a throwaway module pinned to
	# VERSION gives the same binary without the look-up.
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	out="$(
		cd "$tmp" &&
			go mod init notebook.sh/gonb 2>&1 &&
			go get "github.com/janpfeifer/gonb@$GONB_VERSION" 2>&1 &&
			GOBIN="$gobin" go install github.com/janpfeifer/gonb 2>&1
	)" || die "go install github.com/janpfeifer/gonb@$GONB_VERSION failed:
$out"
	gonb_installed=true
fi
if installed goimports golang.org/x/tools "$TOOLS_VERSION"; then
	say "goimports ($TOOLS_VERSION) is installed"
else
	say "installing goimports $TOOLS_VERSION"
	GOBIN="$gobin" go install "golang.org/x/tools/cmd/goimports@$TOOLS_VERSION" ||
		die "go install golang.org/x/tools/cmd/goimports@$TOOLS_VERSION failed"
fi
if installed gopls golang.org/x/tools/gopls "$GOPLS_VERSION"; then
	say "gopls $GOPLS_VERSION is installed"
else
	say "installing gopls $GOPLS_VERSION (a few minutes)"
	GOBIN="$gobin" go install "golang.org/x/tools/gopls@$GOPLS_VERSION" ||
		die "go install golang.org/x/tools/gopls@$GOPLS_VERSION failed"
fi

# 3. The GoNB kernel, registered with Jupyter and pointing at this gonb.
spec="$(jupyter kernelspec list 2>/dev/null | awk '$1 == "gonb" { print $2 }')"
if ! $gonb_installed && [ -n "$spec" ] && grep -qF "\"$gobin/gonb\"" "$spec/kernel.json" 2>/dev/null; then
	say "the gonb kernel is registered ($spec)"
else
	say "registering the gonb kernel with Jupyter"
	out="$("$gobin/gonb" --install 2>&1)" || die "gonb --install failed: $out"
	jupyter kernelspec list 2>/dev/null | awk '$1 == "gonb" { found = 1 } END { exit !found }' ||
		die "gonb --install ran, but 'jupyter kernelspec list' has no gonb"
	if [ -n "$prefix" ]; then
		# gonb --install may write to ~/.local/share/jupyter: copy the
		# kernel into the prefix's data directory, which Jupyter reads
		# first with JUPYTER_DATA_DIR set.
		spec="$(jupyter kernelspec list 2>/dev/null | awk '$1 == "gonb" { print $2 }')"
		case "$spec" in
		"$JUPYTER_DATA_DIR"/*) ;;
		*)
			out="$(jupyter kernelspec install --user --replace --name gonb "$spec" 2>&1)" ||
				die "jupyter kernelspec install of $spec into $JUPYTER_DATA_DIR failed: $out"
			say "copied the gonb kernel from $spec into $JUPYTER_DATA_DIR/kernels/gonb"
			;;
		esac
	fi
fi
say "ready: jupyter $(jupyter --version 2>/dev/null | awk '$1 == "nbconvert" { print "nbconvert " $3 }'), gonb $GONB_VERSION, goimports $TOOLS_VERSION, gopls $GOPLS_VERSION"
if [ -n "$prefix" ]; then
	venv=""
	[ -d "$prefix/venv/bin" ] && venv="$prefix/venv/bin:"
	say "before starting Jupyter or the notebook tests: export PATH=\"$venv$GOBIN:\$PATH\" JUPYTER_DATA_DIR=\"$JUPYTER_DATA_DIR\""
fi
