#!/usr/bin/env bash
# vendor.sh: keeps the browser libraries under internal/web/static/vendor
# pinned and verified against scripts/vendor.lock.json.
#
#   scripts/vendor.sh            verify the committed files against the lock
#                                (no network; exits non-zero naming every
#                                mismatched, missing or unlisted file)
#   scripts/vendor.sh --fetch    download each listed package with `npm pack`,
#                                refuse it unless its tarball matches the lock,
#                                and re-extract the vendored files
#   scripts/vendor.sh --update   download each listed package and (re)write its
#                                lock entry and vendored files
#
# Packages come from the npm registry through `npm pack` only. The script is a
# developer tool: nothing runs it at build or run time (the Go test in
# internal/web/static checks the same lock in CI). It needs bash, node, npm,
# tar and coreutils.
set -euo pipefail

# One line per package: "NAME@VERSION DIR FILE...". DIR is the folder under
# internal/web/static/vendor; each FILE is a path inside the package tarball
# and is copied into DIR under its base name. Keep the licence file listed.
PACKAGES=(
	"htmx.org@4.0.1 htmx dist/htmx.min.js dist/ext/hx-sse.min.js dist/ext/hx-csp.min.js LICENSE"
)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCK=$ROOT/scripts/vendor.lock.json
VENDOR=$ROOT/internal/web/static/vendor

# All JSON reading, writing and hashing is done by this small node program.
# Commands (arguments after the command name):
#   verify LOCK VENDOR SPEC...        check the lock against the list and the files
#   check-list LOCK SPEC...           every SPEC must have a lock entry
#   check-tarball LOCK SPEC TARBALL   the tarball must match the lock entry for SPEC
#   check-files LOCK SPEC STAGE       the staged files must match the lock entry for SPEC
#   add-entry NEWLOCK SPEC DIR TARBALL STAGE PACKJSON
#                                     append SPEC's entry to NEWLOCK
# shellcheck disable=SC2016
HELPER='
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");

const [cmd, ...args] = process.argv.slice(1);
const problems = [];
const problem = (msg) => problems.push(msg);

function hashFile(file, algo, enc) {
	return crypto.createHash(algo).update(fs.readFileSync(file)).digest(enc);
}
const sha256 = (file) => hashFile(file, "sha256", "hex");
const integrity = (file) => "sha512-" + hashFile(file, "sha512", "base64");

function splitSpec(spec) {
	const at = spec.lastIndexOf("@");
	return { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

function readLock(file) {
	let lock;
	try {
		lock = JSON.parse(fs.readFileSync(file, "utf8"));
	} catch (e) {
		console.error(`vendor: cannot read ${file}: ${e.message}`);
		process.exit(1);
	}
	if (!Array.isArray(lock.packages)) {
		console.error(`vendor: ${file} has no "packages" list`);
		process.exit(1);
	}
	return lock;
}

function entryFor(lock, spec) {
	const { name, version } = splitSpec(spec);
	const entry = lock.packages.find((p) => p.name === name);
	if (!entry) {
		problem(`${spec}: no entry in the lock (run scripts/vendor.sh --update)`);
		return null;
	}
	if (entry.version !== version) {
		problem(`${spec}: the lock pins version ${entry.version} (run scripts/vendor.sh --update)`);
		return null;
	}
	return entry;
}

// Every regular file under dir, as slash-separated paths relative to dir.
function walk(dir, rel = "") {
	const out = [];
	for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
		const r = rel ? `${rel}/${d.name}` : d.name;
		if (d.isDirectory()) out.push(...walk(dir, r));
		else if (d.isFile()) out.push(r);
		else problem(`${r}: not a regular file`);
	}
	return out.sort();
}

// Compares the files under dir (restricted to those starting with prefix, if
// given) with the expected path -> sha256 map.
function compareFiles(dir, expected, prefix) {
	const present = fs.existsSync(dir) ? walk(dir).filter((f) => !prefix || f.startsWith(prefix)) : [];
	for (const [file, want] of Object.entries(expected)) {
		const full = path.join(dir, file);
		if (!fs.existsSync(full)) {
			problem(`${file}: missing`);
			continue;
		}
		const got = sha256(full);
		if (got !== want) problem(`${file}: sha256 mismatch: lock has ${want}, file has ${got}`);
	}
	for (const file of present) {
		if (!(file in expected)) problem(`${file}: not listed in the lock`);
	}
}

function finish(okMessage) {
	if (problems.length) {
		for (const p of problems) console.error(`vendor: ${p}`);
		process.exit(1);
	}
	if (okMessage) console.log(okMessage);
}

switch (cmd) {
	case "verify": {
		const [lockFile, vendorDir, ...specs] = args;
		const lock = readLock(lockFile);
		const expected = {};
		for (const spec of specs) entryFor(lock, spec);
		for (const p of lock.packages) {
			if (!specs.includes(`${p.name}@${p.version}`)) {
				problem(`${p.name}@${p.version}: in the lock but not in the list in scripts/vendor.sh`);
			}
			for (const [file, sum] of Object.entries(p.files || {})) {
				if (file in expected) problem(`${file}: listed twice in the lock`);
				expected[file] = sum;
			}
		}
		compareFiles(vendorDir, expected);
		finish(`vendor: ${Object.keys(expected).length} files match ${lockFile}`);
		break;
	}
	case "check-list": {
		const [lockFile, ...specs] = args;
		const lock = readLock(lockFile);
		for (const spec of specs) entryFor(lock, spec);
		finish();
		break;
	}
	case "check-tarball": {
		const [lockFile, spec, tarball] = args;
		const entry = entryFor(readLock(lockFile), spec);
		if (entry) {
			const got = sha256(tarball);
			if (got !== entry.tarballSha256) {
				problem(`${spec}: tarball sha256 mismatch: lock has ${entry.tarballSha256}, download has ${got}`);
			}
			const gotIntegrity = integrity(tarball);
			if (entry.integrity && gotIntegrity !== entry.integrity) {
				problem(`${spec}: tarball integrity mismatch: lock has ${entry.integrity}, download has ${gotIntegrity}`);
			}
		}
		finish(`vendor: ${spec}: tarball matches the lock`);
		break;
	}
	case "check-files": {
		const [lockFile, spec, stage] = args;
		const entry = entryFor(readLock(lockFile), spec);
		if (entry) compareFiles(stage, entry.files || {}, entry.dir + "/");
		finish();
		break;
	}
	case "add-entry": {
		const [newLock, spec, dir, tarball, stage, packJSON] = args;
		const { name, version } = splitSpec(spec);
		const lock = readLock(newLock);
		const got = integrity(tarball);
		const fromNpm = JSON.parse(fs.readFileSync(packJSON, "utf8"))[0]?.integrity;
		if (fromNpm && fromNpm !== got) problem(`${spec}: npm reports integrity ${fromNpm}, the tarball has ${got}`);
		const files = {};
		for (const f of walk(stage).filter((f) => f.startsWith(dir + "/"))) files[f] = sha256(path.join(stage, f));
		lock.packages.push({ name, version, dir, tarballSha256: sha256(tarball), integrity: got, files });
		finish();
		fs.writeFileSync(newLock, JSON.stringify(lock, null, "\t") + "\n");
		break;
	}
	default:
		console.error(`vendor: unknown helper command ${cmd}`);
		process.exit(2);
}
'

helper() {
	node -e "$HELPER" "$@"
}

die() {
	echo "vendor: $*" >&2
	exit 1
}

usage() {
	echo "usage: scripts/vendor.sh [--fetch | --update]" >&2
	exit 2
}

# The NAME@VERSION of every listed package.
specs() {
	local line
	local -a words
	for line in "${PACKAGES[@]}"; do
		read -r -a words <<<"$line"
		echo "${words[0]}"
	done
}

verify() {
	local list
	mapfile -t list < <(specs)
	helper verify "$LOCK" "$VENDOR" "${list[@]}"
}

# fetch_or_update MODE: MODE is "fetch" or "update". Everything is downloaded
# and checked in a temporary folder first; the vendor folder and the lock are
# only touched once every package has passed.
fetch_or_update() {
	local mode=$1 work line spec dir name f base tarball
	local -a words files members list dirs=()
	if [[ $mode == fetch ]]; then
		mapfile -t list < <(specs)
		helper check-list "$LOCK" "${list[@]}"
	fi
	work=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$work'" EXIT
	mkdir -p "$work/stage"
	if [[ $mode == update ]]; then
		echo '{"packages": []}' >"$work/lock.json"
	fi

	for line in "${PACKAGES[@]}"; do
		read -r -a words <<<"$line"
		((${#words[@]} >= 3)) || die "bad package line: $line"
		spec=${words[0]}
		dir=${words[1]}
		files=("${words[@]:2}")
		[[ $spec == ?*@?* ]] || die "$spec: expected NAME@VERSION"
		[[ $dir =~ ^[a-z0-9][a-z0-9._-]*$ ]] || die "$spec: bad folder name $dir"
		[[ ! -e $work/stage/$dir ]] || die "$spec: folder $dir is used twice"
		dirs+=("$dir")

		echo "vendor: $spec: npm pack" >&2
		name=$(printf '%s' "$spec" | tr '/@' '__')
		mkdir -p "$work/$name/tarball" "$work/$name/x" "$work/stage/$dir"
		(cd "$work/$name" && npm pack "$spec" --ignore-scripts --json --pack-destination "$work/$name/tarball" >"$work/$name/pack.json")
		tarball=$(find "$work/$name/tarball" -maxdepth 1 -name '*.tgz' -print)
		[[ -n $tarball && $(wc -l <<<"$tarball") -eq 1 ]] || die "$spec: npm pack did not leave exactly one tarball"

		if [[ $mode == fetch ]]; then
			helper check-tarball "$LOCK" "$spec" "$tarball"
		fi

		members=()
		for f in "${files[@]}"; do
			[[ $f != /* && $f != *..* ]] || die "$spec: bad file path $f"
			members+=("package/$f")
		done
		tar -xzf "$tarball" -C "$work/$name/x" --no-same-owner --no-same-permissions "${members[@]}"
		for f in "${files[@]}"; do
			base=${f##*/}
			[[ -f $work/$name/x/package/$f ]] || die "$spec: $f is not a regular file in the package"
			[[ ! -e $work/stage/$dir/$base ]] || die "$spec: two files are named $base"
			cp "$work/$name/x/package/$f" "$work/stage/$dir/$base"
			chmod 0644 "$work/stage/$dir/$base"
		done

		if [[ $mode == fetch ]]; then
			helper check-files "$LOCK" "$spec" "$work/stage"
		else
			helper add-entry "$work/lock.json" "$spec" "$dir" "$tarball" "$work/stage" "$work/$name/pack.json"
		fi
	done

	mkdir -p "$VENDOR"
	for dir in "${dirs[@]}"; do
		rm -rf "${VENDOR:?}/$dir"
		cp -R "$work/stage/$dir" "$VENDOR/$dir"
	done
	if [[ $mode == update ]]; then
		cp "$work/lock.json" "$LOCK"
		echo "vendor: wrote $LOCK" >&2
	fi
	verify
}

case ${1:-} in
"") verify ;;
--fetch) fetch_or_update fetch ;;
--update) fetch_or_update update ;;
-h | --help) usage ;;
*) usage ;;
esac
