#!/usr/bin/env bash
# Starts and stops a throwaway ZooKeeper server from Debian's package (3.8) that clients reach over
# TLS, for the tests of TLS, x509 and SASL (SecureZooKeeperServer in zk-lock-spring-boot-autoconfigure)
# and the demo. The server runs in a process of its own: a server in the tests' JVM would set the
# JVM-wide zookeeper.ssl.* system properties that the client under test reads too.
#
#   scripts/secure-zookeeper.sh start <dir> <secure-port> [--plain-port N] [--client-auth need|want|none]
#                                     [--tls-dir DIR]
#   scripts/secure-zookeeper.sh stop  <dir>
#
# start installs the zookeeper package when its jar is missing (apt-get, non-interactive), creates
# the system user zklock-zk, generates the TLS material in the TLS directory unless a complete set
# is there (see below), writes <dir>/zoo.cfg, <dir>/jaas.conf and <dir>/log4j.properties, and runs
# the server as zklock-zk in the background on 127.0.0.1 only: TLS on <secure-port>, plain on the
# --plain-port if given.
# Its pid file is <dir>/zookeeper.pid, its log <dir>/zookeeper.log (the JVM's own output in
# <dir>/zookeeper.out), its data <dir>/data (empty at each start). start returns once the server
# answers the four-letter word ruok over TLS (and on the plain port); a server still running in
# <dir> from an earlier start is stopped first. The server writes its pid file before it starts, so
# that a start interrupted at any point leaves no server without one. stop ends the server and
# waits for it: the process of the pid file, or, when that is missing or names another process,
# every process whose command line runs the server on <dir>/zoo.cfg; stopping a server that does
# not run succeeds. Nothing is printed but errors.
#
# The server: NettyServerCnxnFactory; ssl.clientAuth as given (default want); TLSv1.3 and TLSv1.2
# (see CIPHER_SUITES); the x509 and the SASL authentication providers; the four-letter words ruok,
# srvr and mntr; no AdminServer. Its JAAS file has a Server section (DigestLoginModule) with the
# users app / app-secret and intruder / intruder-secret: a client that authenticates with SASL
# DIGEST-MD5 as app has the id sasl:app.
#
# The TLS directory is --tls-dir, by default target/test-tls below the repository (the directory
# above this script's): one set of material for every server of a build, the tests' of every test
# JVM and the demo's, which `./mvnw clean` at the repository's root removes. A start uses the set
# there when it is complete: its file `complete`, written last, names the recipe (a digest of the
# functions below that generate it), and the CA's certificate is valid for a day more (the others
# but the expired one are valid as long and signed after it: they expire after it). Otherwise it
# generates the set again, from an empty directory, so that a generation that was interrupted is
# not used half-done. The check and the generation hold an exclusive lock (flock on the file
# <TLS directory>.lock, waited for up to TLS_LOCK_TIMEOUT seconds), so that servers started at
# once (two test JVMs, the tests and the demo) generate one set between them. Its keytool commands
# run in one JVM (scripts/KeytoolBatch.java, from its source) when the java is a JDK's (a javac
# beside it), else as one keytool run each; each is logged in <TLS directory>/keytool.log: a line
# "keytool <arguments>", then its output.
#
# TLS material: PKCS12, store and key password "changeit", RSA 2048, signed with
# SHA256withRSA, valid 3650 days from generation unless said otherwise. Key entries have the
# alias "server" or "client", CA certificates in trust stores the alias "ca".
#   ca.p12                  the test CA, CN=zk-lock test CA (its key: it signs the rest)
#   ca.pem                  its certificate, PEM
#   truststore.p12          the CA's certificate alone: what server and clients trust
#   server.p12              CN=localhost, SAN dns:localhost,ip:127.0.0.1, extended key usage
#                           serverAuth, signed by the CA (chain: server, CA)
#   client.p12              CN=zk-lock-app, extended key usage clientAuth, signed by the CA
#   client.pem              its certificate, PEM
#   client-key.pem          its private key, PEM, unencrypted PKCS#8 (BEGIN PRIVATE KEY)
#   other-client.p12        CN=zk-lock-intruder, signed by the CA: trusted, another identity
#   expired-client.p12      CN=zk-lock-app, signed by the CA, valid for one day from two days
#                           before its generation: expired from the start, however long the set
#                           is kept
#   foreign-ca.p12          a second CA the server does not trust, CN=zk-lock foreign CA
#   foreign-client.p12      CN=zk-lock-app, signed by the foreign CA
#   foreign-truststore.p12  the foreign CA's certificate alone
# The certificates are for tests only; the CA keys lie next to them.
#
# What ZooKeeper 3.8 does with ssl.clientAuth=want (NettyServerCnxnFactory.CertificateVerifier;
# checked with the ZooKeeper 3.9 client in SecureZooKeeperServerTests):
# - a client without a certificate completes the handshake and is admitted, unauthenticated (its
#   only id is ip:127.0.0.1);
# - a client with a certificate that the trust store accepts is authenticated with the scheme x509
#   and its subject DN in RFC 2253 form (X500Principal.getName()) as the id: x509:CN=zk-lock-app
#   for client.p12, the ACL that CREATOR_ALL_ACL then gives its znodes;
# - a client whose certificate was signed by another CA sends none (the server's certificate
#   request names the CAs it trusts, and the JDK's key manager picks no certificate of others):
#   admitted, unauthenticated, as without a certificate;
# - an expired certificate of the trusted CA fails the handshake (the client gets the alert
#   certificate_unknown), with want as with need.
# With need, a client without a certificate (or with one of another CA) gets the alert
# bad_certificate.
#
# Exit codes: 0 done; 3 the server cannot be installed or run here (not root, no apt-get, the
# package cannot be installed, no keytool, <dir> or the TLS directory out of zklock-zk's reach),
# with one line on stderr saying why; any other code a failure. Every wait is bounded
# (START_TIMEOUT, STOP_TIMEOUT, TLS_LOCK_TIMEOUT seconds; apt waits up to APT_LOCK_TIMEOUT for
# another apt run to finish). The server's java and keytool are those of JAVA_HOME when it is set,
# else those on the PATH.
set -euo pipefail

readonly START_TIMEOUT="${START_TIMEOUT:-60}"
readonly STOP_TIMEOUT="${STOP_TIMEOUT:-30}"
readonly APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-300}"
readonly TLS_LOCK_TIMEOUT="${TLS_LOCK_TIMEOUT:-300}"
readonly PROGRAM="${0##*/}"
readonly OWNER=zklock-zk
readonly PASSWORD=changeit
readonly VALIDITY_DAYS=3650
readonly SERVER_JAR=/usr/share/java/zookeeper.jar
readonly MAIN_CLASS=org.apache.zookeeper.server.quorum.QuorumPeerMain
# The server speaks TLSv1.3 and TLSv1.2. A 3.9 client offers its ssl.protocol alone, TLSv1.3 on
# Java 11 and later; 3.8.0 speaks TLSv1.2 alone unless told otherwise, and answers such a client
# with the alert protocol_version. The suites: ZooKeeper 3.9's defaults without the CBC ones.
readonly CIPHER_SUITES=TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
# What the jar's manifest class path lacks. Debian's ZooKeeper logs through SLF4J 1.7, but no
# binding is named: log4j 1.2 and its binding, both dependencies of libzookeeper-java, are added
# (see ZooKeeperPackage in zk-lock-chaos). The manifest names netty-handler and netty-transport but
# not the Netty jars they need, which NettyServerCnxnFactory loads at the first connection.
readonly EXTRA_JARS=/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar:/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar:/usr/share/java/netty-transport-native-unix-common.jar

usage() {
	echo "usage: $PROGRAM start <dir> <secure-port> [--plain-port N] [--client-auth need|want|none] [--tls-dir DIR] | stop <dir>" >&2
	exit 2
}

# fail, unavailable, log and install_package.
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

ensure_user() {
	if ! id -u "$OWNER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$OWNER" \
			|| fail "cannot create the system user $OWNER"
	fi
}

# Whether a process runs (an exited child that was not reaped yet does not).
alive() {
	[[ -n "$1" && -r "/proc/$1/stat" ]] || return 1
	local state
	state="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d ' ' -f 1)"
	[[ -n "$state" && "$state" != Z ]]
}

# Whether a process is this directory's server (or about to be: setsid and setpriv exec it in
# place): its command line runs QuorumPeerMain on <dir>/zoo.cfg.
is_server() {
	local pid="$1" argument main=0 configuration=0
	local -a arguments
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	mapfile -d '' arguments 2>/dev/null <"/proc/$pid/cmdline" || return 1
	for argument in "${arguments[@]}"; do
		[[ "$argument" == "$MAIN_CLASS" ]] && main=1
		[[ "$argument" == "$dir/zoo.cfg" ]] && configuration=1
	done
	((main && configuration)) && alive "$pid"
}

# The pids of this directory's server: the pid file's, if that process still is the server (a pid
# left from a reboot may name another process by now); else those of the processes running the
# directory's configuration, found in /proc (a server whose pid file was removed).
server_pids() {
	local pid
	pid="$( [[ -f "$dir/zookeeper.pid" ]] && head -n 1 "$dir/zookeeper.pid" | tr -dc '0-9' || true)"
	if is_server "$pid"; then
		echo "$pid"
		return
	fi
	for pid in /proc/[0-9]*; do
		pid="${pid#/proc/}"
		if is_server "$pid"; then
			echo "$pid"
		fi
	done
}

# Waits until a process is gone; false when it is still there after the timeout.
wait_gone() {
	local pid="$1" deadline=$((SECONDS + STOP_TIMEOUT))
	while alive "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# The first line of the server's log that reports an error or names an exception, else the last
# line of its output.
first_error() {
	grep -h -m 1 -E ' (ERROR|FATAL) |^[a-zA-Z.$]+(Exception|Error)\b' "$dir/zookeeper.log" 2>/dev/null \
		|| tail -q -n 1 "$dir/zookeeper.out" "$dir/zookeeper.log" 2>/dev/null | tail -n 1
}

# --- TLS material ------------------------------------------------------------------------------

# keytool's commands are queued in <TLS directory>/keytool.batch, each argument a line and an empty
# line after each command, and run by run_keytool: all in one JVM (KeytoolBatch.java beside this
# script) when java is a JDK's, whose source-file launcher compiles it; else one keytool each.
kt() {
	printf '%s\n' "$@" "" >>"$tls/keytool.batch"
}

run_keytool() {
	if [[ -x "$javac" ]]; then
		"$java" -XX:+UseSerialGC --add-exports java.base/sun.security.tools.keytool=ALL-UNNAMED \
			"$KEYTOOL_BATCH" "$tls/keytool.batch" >>"$tls/keytool.log" 2>&1 \
			|| fail "keytool failed: $(tail -n 1 "$tls/keytool.log")"
	else
		local line
		local -a command=()
		while IFS= read -r line; do
			if [[ -n "$line" ]]; then
				command+=("$line")
				continue
			fi
			echo "keytool ${command[*]}" >>"$tls/keytool.log"
			"$keytool" "${command[@]}" >>"$tls/keytool.log" 2>&1 \
				|| fail "keytool ${command[0]} failed: $(tail -n 1 "$tls/keytool.log")"
			command=()
		done <"$tls/keytool.batch"
	fi
	rm -f "$tls/keytool.batch"
}

# A CA in <name>.p12 (alias ca) and its certificate in <name>.pem.
new_ca() {
	local name="$1" dname="$2"
	kt -genkeypair -keystore "$tls/$name.p12" -storetype PKCS12 -storepass "$PASSWORD" -alias ca \
		-dname "$dname" -keyalg RSA -keysize 2048 -sigalg SHA256withRSA -validity "$VALIDITY_DAYS" \
		-ext bc:c=ca:true,pathlen:0 -ext ku:c=keyCertSign,cRLSign
	kt -exportcert -rfc -keystore "$tls/$name.p12" -storepass "$PASSWORD" -alias ca -file "$tls/$name.pem"
}

# A trust store <name>.p12 holding the certificate of the CA <ca>.
new_truststore() {
	local name="$1" ca="$2"
	kt -importcert -noprompt -keystore "$tls/$name.p12" -storetype PKCS12 -storepass "$PASSWORD" -alias ca \
		-file "$tls/$ca.pem"
}

# A key store <name>.p12 with one key entry whose certificate the CA <ca> signs, with the CA's
# certificate as its chain (the CA's is in the key store while the signed one is installed, so
# that keytool finds the chain there, and removed after); the remaining arguments go to keytool
# -gencert (validity, extensions). Its certificate alone in <name>.crt.
new_keystore() {
	local name="$1" alias="$2" ca="$3" dname="$4"
	shift 4
	kt -genkeypair -keystore "$tls/$name.p12" -storetype PKCS12 -storepass "$PASSWORD" -alias "$alias" \
		-dname "$dname" -keyalg RSA -keysize 2048 -sigalg SHA256withRSA -validity "$VALIDITY_DAYS"
	kt -certreq -keystore "$tls/$name.p12" -storepass "$PASSWORD" -alias "$alias" -file "$tls/$name.csr"
	kt -gencert -keystore "$tls/$ca.p12" -storepass "$PASSWORD" -alias ca -sigalg SHA256withRSA -rfc \
		-infile "$tls/$name.csr" -outfile "$tls/$name.crt" "$@"
	kt -importcert -noprompt -keystore "$tls/$name.p12" -storepass "$PASSWORD" -alias ca -file "$tls/$ca.pem"
	kt -importcert -noprompt -keystore "$tls/$name.p12" -storepass "$PASSWORD" -alias "$alias" \
		-file "$tls/$name.crt"
	kt -delete -keystore "$tls/$name.p12" -storepass "$PASSWORD" -alias ca
}

# The functions that generate the set, as bash prints them, and the constants they use: their
# digest is the recipe that the file complete names.
readonly TLS_FUNCTIONS=(new_ca new_truststore new_keystore generate_tls_files)

tls_recipe() {
	{ declare -f "${TLS_FUNCTIONS[@]}"; declare -p PASSWORD VALIDITY_DAYS OWNER; } | sha256sum | cut -d ' ' -f 1
}

# Whether the TLS directory holds a complete set of this recipe whose certificates are valid for a
# day more: the CA's is, and the others expire after it.
tls_complete() {
	[[ -f "$tls/complete" && "$(cat "$tls/complete")" == "$(tls_recipe)" ]] \
		&& openssl x509 -noout -checkend 86400 -in "$tls/ca.pem" >/dev/null 2>&1
}

# Generates the set unless a complete one is there, under the lock; the lock's file descriptor
# closes with the block, before the server is launched (which would hold it otherwise).
generate_tls() {
	mkdir -p "${tls%/*}"
	{
		flock --wait "$TLS_LOCK_TIMEOUT" 9 \
			|| fail "another start has been generating the TLS material in $tls for more than $TLS_LOCK_TIMEOUT s"
		tls_complete || generate_tls_files
	} 9>"$tls.lock"
}

generate_tls_files() {
	rm -rf "$tls"
	mkdir -p "$tls"
	local client_ext=(-ext ku:c=digitalSignature,keyEncipherment -ext eku=clientAuth)
	new_ca ca "CN=zk-lock test CA"
	new_truststore truststore ca
	new_keystore server server ca "CN=localhost" -validity "$VALIDITY_DAYS" \
		-ext ku:c=digitalSignature,keyEncipherment -ext eku=serverAuth -ext san=dns:localhost,ip:127.0.0.1
	new_keystore client client ca "CN=zk-lock-app" -validity "$VALIDITY_DAYS" "${client_ext[@]}"
	new_keystore other-client client ca "CN=zk-lock-intruder" -validity "$VALIDITY_DAYS" "${client_ext[@]}"
	new_keystore expired-client client ca "CN=zk-lock-app" -startdate -2d -validity 1 "${client_ext[@]}"
	new_ca foreign-ca "CN=zk-lock foreign CA"
	new_truststore foreign-truststore foreign-ca
	new_keystore foreign-client client foreign-ca "CN=zk-lock-app" -validity "$VALIDITY_DAYS" "${client_ext[@]}"
	run_keytool
	mv "$tls/client.crt" "$tls/client.pem"
	rm -f "$tls"/*.crt "$tls"/*.csr
	openssl pkcs12 -in "$tls/client.p12" -passin "pass:$PASSWORD" -nocerts -nodes 2>>"$tls/keytool.log" \
		| openssl pkey -out "$tls/client-key.pem" 2>>"$tls/keytool.log" \
		|| fail "cannot export the client's key to PEM: $(tail -n 1 "$tls/keytool.log")"
	# The server reads its key store and the trust store; the tests (root) read everything.
	chown -R "root:$OWNER" "$tls"
	chmod 750 "$tls"
	chmod 640 "$tls"/*
	tls_recipe >"$tls/complete"
}

# --- server ------------------------------------------------------------------------------------

write_configuration() {
	{
		echo "# Written by $PROGRAM; rewritten at each start."
		echo "tickTime=2000"
		echo "dataDir=$dir/data"
		echo "secureClientPort=$secure_port"
		echo "secureClientPortAddress=127.0.0.1"
		if [[ -n "$plain_port" ]]; then
			echo "clientPort=$plain_port"
			echo "clientPortAddress=127.0.0.1"
		fi
		echo "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory"
		echo "ssl.keyStore.location=$tls/server.p12"
		echo "ssl.keyStore.password=$PASSWORD"
		echo "ssl.keyStore.type=PKCS12"
		echo "ssl.trustStore.location=$tls/truststore.p12"
		echo "ssl.trustStore.password=$PASSWORD"
		echo "ssl.trustStore.type=PKCS12"
		echo "ssl.clientAuth=$client_auth"
		echo "ssl.protocol=TLSv1.3"
		echo "ssl.enabledProtocols=TLSv1.3,TLSv1.2"
		echo "ssl.ciphersuites=$CIPHER_SUITES"
		echo "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider"
		echo "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
		echo "4lw.commands.whitelist=ruok,srvr,mntr"
		echo "admin.enableServer=false"
	} >"$dir/zoo.cfg"
	cat >"$dir/jaas.conf" <<-'EOF'
		Server {
		    org.apache.zookeeper.server.auth.DigestLoginModule required
		    user_app="app-secret"
		    user_intruder="intruder-secret";
		};
	EOF
	cat >"$dir/log4j.properties" <<-EOF
		log4j.rootLogger=INFO, FILE
		log4j.appender.FILE=org.apache.log4j.FileAppender
		log4j.appender.FILE.File=$dir/zookeeper.log
		log4j.appender.FILE.Append=true
		log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
		log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1} - %m%n
	EOF
	chown "root:$OWNER" "$dir/zoo.cfg" "$dir/jaas.conf" "$dir/log4j.properties"
	chmod 640 "$dir/zoo.cfg" "$dir/jaas.conf" "$dir/log4j.properties"
	rm -rf "$dir/data"
	mkdir "$dir/data"
	chown "$OWNER:" "$dir/data"
	chmod 700 "$dir/data"
	: >"$dir/zookeeper.log"
	chown "$OWNER:" "$dir/zookeeper.log"
}

# Whether the server answers ruok over TLS, the server's certificate checked against the CA and
# 127.0.0.1 (with client.p12's certificate, so that it also passes with ssl.clientAuth=need).
answers_tls() {
	local answer
	answer="$(printf ruok | timeout 5 openssl s_client -connect "127.0.0.1:$secure_port" -quiet \
		-CAfile "$tls/ca.pem" -verify_return_error -verify_ip 127.0.0.1 \
		-cert "$tls/client.pem" -key "$tls/client-key.pem" 2>/dev/null)" || true
	[[ "$answer" == imok ]]
}

answers_plain() {
	local answer
	answer="$(timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf ruok >&3; cat <&3' _ "$plain_port" 2>/dev/null)" \
		|| true
	[[ "$answer" == imok ]]
}

do_start() {
	[[ -r "$SERVER_JAR" ]] || install_package zookeeper "$dir/apt-get.log"
	[[ -r "$SERVER_JAR" ]] || unavailable "the zookeeper package is installed but $SERVER_JAR is missing"
	local jar
	for jar in ${EXTRA_JARS//:/ }; do
			[[ -r "$jar" ]] || unavailable "$jar is missing (it comes with libzookeeper-java's dependencies)"
	done
	command -v openssl >/dev/null || install_package openssl "$dir/apt-get.log"
	command -v flock >/dev/null || install_package util-linux "$dir/apt-get.log"
	[[ -x "$java" ]] || unavailable "no java at $java"
	[[ -x "$keytool" ]] || unavailable "no keytool at $keytool"
	ensure_user
	runuser -u "$OWNER" -- test -x "$dir" \
		|| unavailable "the system user $OWNER cannot enter $dir (a directory above it is closed to others)"
	mkdir -p "${tls%/*}"
	runuser -u "$OWNER" -- test -x "${tls%/*}" \
		|| unavailable "the system user $OWNER cannot enter ${tls%/*} (a directory above it is closed to others)"
	do_stop
	generate_tls
	write_configuration
	cd "$dir"
	# The launched process writes its pid file before it becomes the server: setsid (this subshell
	# is no process group leader, so it does not fork) and setpriv execute java in place, the pid
	# stays the subshell's. Were this script interrupted right after the launch, the server still
	# has its pid file, for stop and the next start. setsid takes it out of the caller's session,
	# so that the caller's terminal and process group do not reach it. The client compiler alone
	# (TieredStopAtLevel=1), as the demo's own JVMs: a server of the tests lives for seconds to
	# minutes, and it answers its first TLS hello about 2 s sooner so.
	(
		echo "$BASHPID" >"$dir/zookeeper.pid"
		exec setsid setpriv --reuid="$OWNER" --regid="$OWNER" --init-groups -- "$java" -Xmx128m -XX:+UseSerialGC \
			-XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true -Dzookeeper.jmx.log4j.disable=true \
			-Dlog4j.configuration="file:$dir/log4j.properties" \
			-Djava.security.auth.login.config="$dir/jaas.conf" \
			-cp "$SERVER_JAR:$EXTRA_JARS" "$MAIN_CLASS" "$dir/zoo.cfg"
	) </dev/null >"$dir/zookeeper.out" 2>&1 &
	local pid=$! deadline=$((SECONDS + START_TIMEOUT))
	until answers_tls && { [[ -z "$plain_port" ]] || answers_plain; }; do
		alive "$pid" || fail "ZooKeeper exited while starting: $(first_error)"
		if ((SECONDS >= deadline)); then
			kill -KILL "$pid" 2>/dev/null || true
			fail "ZooKeeper did not answer on 127.0.0.1:$secure_port within $START_TIMEOUT s: $(first_error)"
		fi
		sleep 0.3
	done
}

do_stop() {
	local pid
	for pid in $(server_pids); do
		kill -TERM "$pid" 2>/dev/null || true
		if ! wait_gone "$pid"; then
			kill -KILL "$pid" 2>/dev/null || true
			wait_gone "$pid" || fail "ZooKeeper (pid $pid) did not stop"
		fi
	done
	rm -f "$dir/zookeeper.pid"
}

# --- main --------------------------------------------------------------------------------------

valid_port() {
	[[ "$1" =~ ^[0-9]+$ ]] && (($1 > 0 && $1 < 65536)) || fail "not a port: $1"
}

(($# >= 2)) || usage
command="$1"
dir_argument="$2"
plain_port=
client_auth=want
tls_argument=
case "$command" in
	start)
		(($# >= 3)) || usage
		secure_port="$3"
		valid_port "$secure_port"
		shift 3
		while (($# > 0)); do
			case "$1" in
				--plain-port)
					(($# >= 2)) || usage
					valid_port "$2"
					plain_port="$2"
					shift 2
					;;
				--client-auth)
					(($# >= 2)) || usage
					[[ "$2" == need || "$2" == want || "$2" == none ]] || usage
					client_auth="$2"
					shift 2
					;;
				--tls-dir)
					(($# >= 2)) && [[ -n "$2" ]] || usage
					tls_argument="$2"
					shift 2
					;;
				*)
					usage
					;;
			esac
		done
		[[ "$plain_port" != "$secure_port" ]] || fail "the plain and the secure port are both $secure_port"
		;;
	stop)
		(($# == 2)) || usage
		;;
	*)
		usage
		;;
esac
((EUID == 0)) || unavailable "must run as root: it installs packages and runs the server as a system user of its own"
mkdir -p "$dir_argument"
dir="$(cd "$dir_argument" && pwd)"
tls="$(realpath -m "${tls_argument:-$(dirname "${BASH_SOURCE[0]}")/../target/test-tls}")"
KEYTOOL_BATCH="$(realpath "$(dirname "${BASH_SOURCE[0]}")/KeytoolBatch.java")"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
keytool="${JAVA_HOME:+$JAVA_HOME/bin/}keytool"
if [[ -z "${JAVA_HOME:-}" ]]; then
	java="$(command -v java || echo java)"
	keytool="$(command -v keytool || echo keytool)"
fi
# A JDK's javac beside its java: then KeytoolBatch.java can run from its source.
javac="$(dirname "$(readlink -f "$java")")/javac"
"do_$command"
