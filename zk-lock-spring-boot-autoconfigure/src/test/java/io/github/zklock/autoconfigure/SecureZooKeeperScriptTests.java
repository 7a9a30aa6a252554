package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code scripts/secure-zookeeper.sh} when a start was interrupted or the pid file lost: whatever
 * it had launched, {@code stop} ends, and the next {@code start} succeeds.
 *
 * <p>The interruption comes at a known point, not by luck: bash sources the file that
 * {@code BASH_ENV} names before the script, and the {@code DEBUG} trap set there (inherited by the
 * script's functions with {@code functrace}) sends the script's shell {@code SIGTERM} before the
 * first command that follows its first background launch, the server's. The server's directory
 * is this test's own, its TLS material that of the shared {@link SecureZooKeeperServer} (a link to
 * it, so that this test does not generate its own). Skipped where the script cannot run the server.
 */
class SecureZooKeeperScriptTests {

	/** Gives this test the TLS material of the shared server, and skips it where there is none. */
	@RegisterExtension
	static final SecureZooKeeperServer shared = SecureZooKeeperServer.create();

	private static final Path script = SecureZooKeeperServer.findScript();

	private static final String MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

	/** The exit code of a shell ended by {@code SIGTERM}. */
	private static final int TERMINATED = 128 + 15;

	private static final String INTERRUPT_AFTER_LAUNCH = """
			# Sourced by bash before the script (BASH_ENV); the launched process's subshell and the
			# script's command substitutions are not $$, and $! is empty until the launch.
			set -o functrace
			trap '[[ -n "${!:-}" && "$BASHPID" == "$$" ]] && kill -TERM $$' DEBUG
			""";

	@Test
	void stopEndsTheServerOfAStartInterruptedRightAfterTheLaunchAndTheNextStartSucceeds() throws Exception {
		Path directory = directory("interrupted");
		Path bashEnv = Files.writeString(log(directory).resolveSibling(directory.getFileName() + "-bash-env"),
				INTERRUPT_AFTER_LAUNCH);
		String[] start = startArguments(directory);
		try {
			int interrupted = SecureZooKeeperServer.runScript(script, log(directory),
					SecureZooKeeperServer.START_TIMEOUT, Map.of("BASH_ENV", bashEnv.toString()), start);
			Assumptions.assumeFalse(interrupted == SecureZooKeeperServer.UNAVAILABLE, "the script cannot run the server");
			assertThat(interrupted).as("the start's exit code (see %s)", log(directory)).isEqualTo(TERMINATED);
			await().atMost(Duration.ofSeconds(30)).until(() -> !servers(directory).isEmpty());
			long launched = servers(directory).get(0).pid();
			assertThat(directory.resolve("zookeeper.pid")).as("the launched server's pid file")
				.content()
				.isEqualToIgnoringWhitespace(Long.toString(launched));

			assertStops(directory, "the interrupted start's server");
			assertThat(run(start)).as("the next start (see %s)", log(directory)).isZero();
			assertThat(servers(directory)).extracting(ProcessHandle::pid).singleElement().isNotEqualTo(launched);
			assertStops(directory, "the next start's server");
		}
		finally {
			// Whatever a failure above left running, so that it does not outlive the build.
			servers(directory).forEach(ProcessHandle::destroyForcibly);
		}
	}

	@Test
	void stopEndsAServerWhosePidFileIsGone() throws Exception {
		Path directory = directory("without-pid-file");
		try {
			int started = run(startArguments(directory));
			Assumptions.assumeFalse(started == SecureZooKeeperServer.UNAVAILABLE, "the script cannot run the server");
			assertThat(started).as("the start (see %s)", log(directory)).isZero();
			assertThat(servers(directory)).hasSize(1);
			Files.delete(directory.resolve("zookeeper.pid"));

			assertStops(directory, "the server without its pid file");
		}
		finally {
			servers(directory).forEach(ProcessHandle::destroyForcibly);
		}
	}

	/** Stop the server of the directory; then no server of it runs (after its exit is reaped). */
	private static void assertStops(Path directory, String server) throws IOException {
		assertThat(run("stop", directory.toString())).as("stop (see %s)", log(directory)).isZero();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(servers(directory)).as(server + " after stop").isEmpty());
	}

	/** A server directory of this JVM's own with the shared server's TLS material. */
	private static Path directory(String name) throws IOException {
		Path directory = Path.of("target", "secure-zookeeper")
			.toAbsolutePath()
			.resolve(name + "-" + ProcessHandle.current().pid());
		Files.createDirectories(directory);
		Files.deleteIfExists(directory.resolve("tls"));
		Files.createSymbolicLink(directory.resolve("tls"), shared.directory().resolve("tls"));
		return directory;
	}

	private static Path log(Path directory) {
		return directory.resolveSibling(directory.getFileName() + "-script.log");
	}

	private static String[] startArguments(Path directory) throws IOException {
		int securePort = SecureZooKeeperServer.freePort();
		int plainPort = SecureZooKeeperServer.freePort();
		while (plainPort == securePort) {
			plainPort = SecureZooKeeperServer.freePort();
		}
		return new String[] { "start", directory.toString(), Integer.toString(securePort), "--plain-port",
				Integer.toString(plainPort) };
	}

	private static int run(String... arguments) throws IOException {
		return SecureZooKeeperServer.runScript(script, log(Path.of(arguments[1])), SecureZooKeeperServer.START_TIMEOUT,
				Map.of(), arguments);
	}

	/** The live processes running the server on the directory's {@code zoo.cfg}. */
	private static List<ProcessHandle> servers(Path directory) {
		String configuration = directory.resolve("zoo.cfg").toString();
		return ProcessHandle.allProcesses()
			.filter(ProcessHandle::isAlive)
			.filter((process) -> process.info()
				.arguments()
				.map((arguments) -> List.of(arguments).contains(MAIN_CLASS) && List.of(arguments).contains(configuration))
				.orElse(false))
			.toList();
	}

}
