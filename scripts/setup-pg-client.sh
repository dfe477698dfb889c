#!/usr/bin/env bash
# Installs the PostgreSQL client tools that dump and restore managed postgres instances (pg_dump, pg_restore, psql)
# into ${SVC_TOOLS_DIR:-/var/cache/svc/tools}/pg-client/17. The npm packages of the server binaries ship none, and
# Debian 12 has only client 15, which refuses to dump a 16 or 17 server; client 17 dumps 15, 16 and 17. So this takes
# Debian 13's postgresql-client-17 and the libraries it needs from a Debian mirror with a private apt configuration
# (the machine's own sources and packages stay as they are), unpacks them with dpkg -x, and writes wrappers in bin/
# that run each tool through Debian 13's own loader (the binaries need glibc 2.38): nothing of the host's libraries is
# used. docs/managed.md, "Dumps and backups", says more; shared/notes/recipes.md has the manual steps.
# Idempotent: the marker file (its content the installed version) is written last, so a second run is instant and an
# interrupted install is redone. Called by scripts/setup.sh. SVC_DEBIAN_MIRROR overrides the mirror (by default the
# Debian URI of the machine's apt sources, else deb.debian.org).
set -euo pipefail

suite=trixie
major=17
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
base=$tools/pg-client
dir=$base/$major
marker=$dir/pg-client.version
# postgresql-client-17 and the libraries its binaries load (checked with the loader's --list below).
packages=(postgresql-client-17 libpq5 libc6 libssl3t64 liblz4-1 libzstd1 zlib1g libxxhash0 libgssapi-krb5-2 libkrb5-3
  libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1 libldap2 libsasl2-2 libsasl2-modules-db libdb5.3t64
  libreadline8t64 libtinfo6 libncursesw6 libgnutls30t64 libidn2-0 libunistring5 libtasn1-6 libnettle8t64
  libhogweed6t64 libgmp10 libp11-kit0 libffi8)
tools_in_bin=(pg_dump pg_restore psql)

if [ -s "$marker" ] && [ -x "$dir/bin/pg_dump" ]; then
  echo "setup-pg-client: PostgreSQL client $(cat "$marker") installed in $dir"
  exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
  echo "setup-pg-client: only x86_64 is supported (this machine is $(uname -m)); dumps of managed postgres stay unavailable" >&2
  exit 1
fi
for command in apt-get dpkg; do
  command -v "$command" >/dev/null || { echo "setup-pg-client: $command is missing (a Debian machine is needed)" >&2; exit 1; }
done

umask 022 # the server runs the tools; everything here is readable by all
if ! mkdir -p "$base"; then
  echo "setup-pg-client: cannot create $base; set SVC_TOOLS_DIR to a directory you may write" >&2
  exit 1
fi
exec 9>"$base/.install.lock"
flock 9 # a second run waits for the first, then finds the marker
if [ -s "$marker" ] && [ -x "$dir/bin/pg_dump" ]; then exit 0; fi

# The Debian mirror of the machine's sources (deb822 URIs: or a one-line deb entry), else the public one.
debian_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' |
    grep -E '/debian/?$' | head -n 1 || true)
  [ -n "$uri" ] || uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }' | grep -E '/debian/?$' | head -n 1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}
mirror=${SVC_DEBIAN_MIRROR:-$(debian_mirror)}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || keyring=/usr/share/keyrings/debian-archive-$suite-stable.gpg

apt_dir=$base/apt
log=$base/install.log
work=$base/$major.partial
rm -rf "$work" && mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/debs" "$work/root"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$apt_dir/$suite.list"
: >"$apt_dir/status" # the machine's installed packages play no part in what is chosen
apt_options=(-o "Dir::Etc::SourceList=$apt_dir/$suite.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status" -o "Dir::Cache=$apt_dir/cache"
  -o APT::Sandbox::User=root -qq)
echo "setup-pg-client: fetching postgresql-client-$major of Debian $suite from $mirror"
failed() {
  echo "setup-pg-client: $1; the last lines of $log:" >&2
  tail -n 25 "$log" >&2
  exit 1
}
apt-get "${apt_options[@]}" --error-on=any update >"$log" 2>&1 || failed "apt-get update of $suite from $mirror failed"
compgen -G "$apt_dir/lists/*_dists_${suite}_main_binary-*_Packages*" >/dev/null || failed "apt-get update found no package list of $suite at $mirror"
(cd "$work/debs" && apt-get "${apt_options[@]}" download "${packages[@]}") >>"$log" 2>&1 || failed "downloading the packages failed"
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root" >>"$log" 2>&1 || failed "unpacking $deb failed"; done
rm -rf "$work/debs"

# Wrappers: the loader of the unpacked glibc, with the unpacked libraries only.
mkdir -p "$work/bin"
for tool in "${tools_in_bin[@]}"; do
  cat >"$work/bin/$tool" <<EOF
#!/bin/sh
# Written by scripts/setup-pg-client.sh: $tool of Debian $suite's postgresql-client-$major, run through its own loader.
root=\$(cd "\$(dirname "\$0")/../root" && pwd)
lib=\$root/usr/lib/x86_64-linux-gnu
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "\$root/usr/lib/postgresql/$major/bin/$tool" "\$@"
EOF
  chmod 755 "$work/bin/$tool"
done

lib=$work/root/usr/lib/x86_64-linux-gnu
for tool in "${tools_in_bin[@]}"; do
  listed=$("$lib/ld-linux-x86-64.so.2" --library-path "$lib" --list "$work/root/usr/lib/postgresql/$major/bin/$tool" 2>&1) ||
    { echo "$listed" >>"$log"; failed "the loader cannot list the libraries of $tool"; }
  if grep -q 'not found' <<<"$listed"; then
    echo "$listed" >>"$log"
    failed "$tool needs libraries that are not unpacked: $(grep 'not found' <<<"$listed" | awk '{print $1}' | tr '\n' ' ')"
  fi
done
reported=$("$work/bin/pg_dump" --version 2>>"$log" || true)
case $reported in
  "pg_dump (PostgreSQL) $major."*) ;;
  *) failed "pg_dump answers '$reported' to --version, not $major.x" ;;
esac
version=$(awk '{ print $3 }' <<<"$reported")
rm -rf "$dir"
mv "$work" "$dir"
echo "$version" >"$marker"
rm -rf "$log" "$apt_dir" # the package lists are only needed to install
echo "setup-pg-client: PostgreSQL client $version installed in $dir in ${SECONDS} s"
