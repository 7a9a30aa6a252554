# Shared by the server scripts (database-server.sh, secure-zookeeper.sh, prometheus-server.sh),
# which source it after setting PROGRAM (their name) and APT_LOCK_TIMEOUT (seconds apt waits for
# another apt run to finish). Their exit codes: 1 a failure, 3 what they need cannot be installed
# or run here.

# Fails the script with exit code 1, saying why on stderr.
fail() {
	echo "$PROGRAM: $*" >&2
	exit 1
}

# Ends the script with exit code 3: what it needs cannot be installed or run here.
unavailable() {
	echo "$PROGRAM: $*" >&2
	exit 3
}

log() {
	echo "$PROGRAM: $*"
}

# Installs a Debian package quietly, its apt-get output in the file given; refreshes the package
# lists once if the first try fails. Exits with code 3 where the package cannot be installed.
install_package() {
	local package="$1" apt_log="$2"
	command -v apt-get >/dev/null || unavailable "$package is not installed and there is no apt-get to install it"
	log "installing $package (apt-get output in $apt_log)"
	local -a apt=(apt-get -y -q -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT" -o Dpkg::Options::=--force-confdef
		-o Dpkg::Options::=--force-confold)
	local start=$SECONDS
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "$package" >"$apt_log" 2>&1; then
		if ! { DEBIAN_FRONTEND=noninteractive "${apt[@]}" update \
				&& DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "$package"; } >>"$apt_log" 2>&1; then
			unavailable "cannot install $package: $(tail -n 1 "$apt_log")"
		fi
	fi
	log "installed $package in $((SECONDS - start)) s"
}
