#!/bin/sh
# Installs a retrylint release binary: the build for this OS and CPU, its
# SHA-256 checked against the one published beside it, into ~/.local/bin.
#
#   curl -fsSL https://raw.githubusercontent.com/retrylint/retrylint/main/install.sh | sh
#
# Settings (environment):
#   RETRYLINT_VERSION      a release tag (v0.1.0) or `latest` (the default)
#   RETRYLINT_INSTALL_DIR  where the binary goes (default ~/.local/bin)
#   RETRYLINT_TARGET       a release target to install instead of this
#                          machine's (say x86_64-unknown-linux-gnu: on Linux
#                          the default is the static musl build, which runs on
#                          any distribution)
#   RETRYLINT_RELEASES     the releases URL (default the GitHub repository's;
#                          a mirror, or a local server in a test)
#
# The release workflow (.github/workflows/release.yml) publishes what this
# reads: retrylint-TARGET.tar.gz (.zip on Windows) and TARGET's .sha256 file.
set -eu

version="${RETRYLINT_VERSION:-latest}"
dir="${RETRYLINT_INSTALL_DIR:-$HOME/.local/bin}"
releases="${RETRYLINT_RELEASES:-https://github.com/retrylint/retrylint/releases}"

say() { printf 'retrylint install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

target="${RETRYLINT_TARGET:-}"
if [ -z "$target" ]; then
    case "$(uname -m)" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) die "no release build for CPU $(uname -m); build from source: cargo install --locked --git https://github.com/retrylint/retrylint" ;;
    esac
    case "$(uname -s)" in
        Linux) target="$arch-unknown-linux-musl" ;;
        Darwin) target="$arch-apple-darwin" ;;
        # Git Bash, MSYS2, Cygwin. Windows on Arm runs the x86_64 build.
        MINGW* | MSYS* | CYGWIN* | Windows_NT) target="x86_64-pc-windows-msvc" ;;
        *) die "no release build for $(uname -s); build from source: cargo install --locked --git https://github.com/retrylint/retrylint" ;;
    esac
fi
case "$target" in
    *windows*) archive="retrylint-$target.zip" exe=retrylint.exe ;;
    *) archive="retrylint-$target.tar.gz" exe=retrylint ;;
esac
if [ "$version" = latest ]; then
    url="$releases/latest/download/$archive"
else
    url="$releases/download/$version/$archive"
fi

fetch() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http' -fsSL --retry 3 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        die "neither curl nor wget is installed"
    fi
}

sha256() { # FILE -> hex digest
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 "$1" | sed 's/.*= *//'
    else
        die "no sha256sum, shasum or openssl to check the download with"
    fi
}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t retrylint)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

say "downloading $url"
fetch "$url" "$tmp/$archive" || die "cannot download $url (is $version a release with a $target build?)"
fetch "$url.sha256" "$tmp/$archive.sha256" || die "cannot download $url.sha256"
want=$(cut -d' ' -f1 <"$tmp/$archive.sha256" | tr -d '\r\n')
got=$(sha256 "$tmp/$archive")
if [ -z "$want" ] || [ "$want" != "$got" ]; then
    die "checksum mismatch for $archive: expected $want, got $got; nothing installed"
fi

mkdir -p "$tmp/x"
case "$archive" in
    *.zip)
        if command -v unzip >/dev/null 2>&1; then
            unzip -q "$tmp/$archive" -d "$tmp/x"
        else
            # Windows' own tar (bsdtar) reads zip files.
            tar -xf "$tmp/$archive" -C "$tmp/x"
        fi ;;
    *) tar -xzf "$tmp/$archive" -C "$tmp/x" ;;
esac
[ -f "$tmp/x/$exe" ] || die "$archive holds no $exe"

mkdir -p "$dir"
# Copied next to its place and renamed over it, so a running retrylint is
# never overwritten half-way.
cp "$tmp/x/$exe" "$dir/.$exe.new"
chmod 755 "$dir/.$exe.new"
mv -f "$dir/.$exe.new" "$dir/$exe"
say "installed $("$dir/$exe" --version 2>/dev/null || echo "$exe") to $dir/$exe"
case ":$PATH:" in
    *":$dir:"*) ;;
    *) say "$dir is not on PATH; add it, e.g. export PATH=\"$dir:\$PATH\"" ;;
esac
