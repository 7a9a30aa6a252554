package io.github.zklock.transaction;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * A real PostgreSQL or MariaDB server from Debian's packages for the tests of a class, started
 * and stopped by {@code scripts/database-server.sh} (which installs the package if needed), with
 * a fresh database per test. Registered on a {@code static} field:
 * <pre class="code">
 * &#64;RegisterExtension
 * static final DatabaseServerExtension postgres = DatabaseServerExtension.postgres();
 * </pre>
 * Before the class's first test the script starts the server on a free loopback port with its
 * files in {@code target/database-servers/<server>} (the script's output in
 * {@code target/database-servers/<server>-script.log}); after the last test it stops it. When the
 * script cannot install or run the server here (its exit code 3: not root, no apt-get, no
 * package), each test of the class is skipped with the script's reason (each, rather than the
 * class at once, so that the build's report counts them as skipped); any other failure fails
 * them. Waits
 * are bounded: the start (an installation included) by {@link #START_TIMEOUT}, the stop by
 * {@link #STOP_TIMEOUT}, connections by 10 s, every statement by 60 s and every lock wait by 10 s
 * (as H2's {@code LOCK_TIMEOUT} in the H2 tests).
 */
final class DatabaseServerExtension implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

	/** Longest wait for the script to start the server, an installation of the package included. */
	static final Duration START_TIMEOUT = Duration.ofMinutes(10);

	/** Longest wait for the script to stop the server. */
	static final Duration STOP_TIMEOUT = Duration.ofMinutes(3);

	/** The script's exit code when the server cannot be installed or run on this machine. */
	private static final int UNAVAILABLE = 3;

	private static final String USER = "zklock";

	private final Server server;

	private final AtomicInteger databases = new AtomicInteger();

	private final Map<DataSource, String> names = new IdentityHashMap<>();

	private Path script;

	private Path directory;

	private int port;

	private boolean started;

	/** Why the server is not available here, when the script said so. */
	private String unavailable;

	private DatabaseServerExtension(Server server) {
		this.server = server;
	}

	/**
	 * A PostgreSQL server.
	 * @return the extension
	 */
	static DatabaseServerExtension postgres() {
		return new DatabaseServerExtension(Server.POSTGRES);
	}

	/**
	 * A MariaDB server.
	 * @return the extension
	 */
	static DatabaseServerExtension mariaDb() {
		return new DatabaseServerExtension(Server.MARIADB);
	}

	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		this.script = findScript();
		Path servers = Path.of("target", "database-servers").toAbsolutePath();
		this.directory = servers.resolve(this.server.scriptName);
		this.port = freePort();
		Path log = servers.resolve(this.server.scriptName + "-script.log");
		int exitCode = runScript(log, START_TIMEOUT, "start", this.server.scriptName, this.directory.toString(),
				Integer.toString(this.port));
		if (exitCode == UNAVAILABLE) {
			this.unavailable = this.server.displayName + " not available: " + lastLine(log);
			System.err.println(context.getDisplayName() + ": skipped, " + this.unavailable);
			return;
		}
		if (exitCode != 0) {
			throw new IllegalStateException(this.server.displayName + " did not start (exit code " + exitCode + "): "
					+ lastLine(log) + " (see " + log + ")");
		}
		this.started = true;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		if (this.unavailable != null) {
			Assumptions.abort(this.unavailable);
		}
	}

	@Override
	public void afterAll(ExtensionContext context) throws Exception {
		if (!this.started) {
			return;
		}
		this.started = false;
		Path log = this.directory.resolveSibling(this.server.scriptName + "-script.log");
		int exitCode = runScript(log, STOP_TIMEOUT, "stop", this.server.scriptName, this.directory.toString());
		if (exitCode != 0) {
			throw new IllegalStateException(this.server.displayName + " did not stop (exit code " + exitCode + "): "
					+ lastLine(log) + " (see " + log + ")");
		}
	}

	/**
	 * Create an empty database owned by the test user.
	 * @param urlProperties connection properties added to the URL, {@code name=value} each
	 * @return a DataSource opening a new connection to it each time
	 */
	DriverManagerDataSource createDatabase(String... urlProperties) {
		String name = "fence_" + this.databases.incrementAndGet();
		administer("DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name);
		StringBuilder url = new StringBuilder(this.server.url(this.port, name));
		for (String property : urlProperties) {
			url.append('&').append(property);
		}
		DriverManagerDataSource dataSource = new DriverManagerDataSource(url.toString(), USER, USER);
		synchronized (this.names) {
			this.names.put(dataSource, name);
		}
		return dataSource;
	}

	/**
	 * Return an R2DBC ConnectionFactory on a database that {@link #createDatabase} created, with the
	 * same user and lock wait time as its DataSource (10 s): the driver's URL form.
	 * @param dataSource the database's DataSource
	 * @return a ConnectionFactory opening a new connection to it each time
	 */
	ConnectionFactory connectionFactory(DataSource dataSource) {
		String name;
		synchronized (this.names) {
			name = this.names.get(dataSource);
		}
		if (name == null) {
			throw new IllegalArgumentException("Not a database of this server: " + dataSource);
		}
		return ConnectionFactories.get(this.server.r2dbcUrl(this.port, name));
	}

	/**
	 * Drop a database that {@link #createDatabase} created, with its connections (PostgreSQL) or
	 * after they end (MariaDB, at most 10 s).
	 * @param dataSource its DataSource
	 */
	void dropDatabase(DataSource dataSource) {
		String name;
		synchronized (this.names) {
			name = this.names.remove(dataSource);
		}
		if (name == null) {
			throw new IllegalArgumentException("Not a database of this server: " + dataSource);
		}
		administer(this.server.dropDatabase(name));
	}

	private void administer(String... statements) {
		try (Connection connection = DriverManager.getConnection(this.server.url(this.port, this.server.adminDatabase),
				USER, USER); Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException(this.server.displayName + " failed " + List.of(statements) + ": " + ex, ex);
		}
	}

	private int runScript(Path log, Duration timeout, String... arguments) throws IOException, InterruptedException {
		Files.createDirectories(log.getParent());
		List<String> command = new ArrayList<>();
		command.add(this.script.toString());
		command.addAll(List.of(arguments));
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			process.descendants().forEach(ProcessHandle::destroyForcibly);
			process.destroyForcibly();
			throw new IllegalStateException(
					"scripts/database-server.sh " + String.join(" ", arguments) + " took longer than " + timeout
							+ " (see " + log + ")");
		}
		return process.exitValue();
	}

	private static Path findScript() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path script = dir.resolve("scripts").resolve("database-server.sh");
			if (Files.isRegularFile(script)) {
				return script;
			}
		}
		throw new IllegalStateException("No scripts/database-server.sh in " + Path.of("").toAbsolutePath()
				+ " or a directory above it");
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	private static String lastLine(Path log) {
		try {
			List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
			return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private enum Server {

		POSTGRES("postgres", "PostgreSQL", "postgres") {

			@Override
			String url(int port, String database) {
				return "jdbc:postgresql://127.0.0.1:" + port + "/" + database
						+ "?connectTimeout=10&socketTimeout=60&options=-c%20lock_timeout=10000";
			}

			@Override
			String r2dbcUrl(int port, String database) {
				return "r2dbc:postgresql://" + USER + ":" + USER + "@127.0.0.1:" + port + "/" + database
						+ "?connectTimeout=PT10S&options=lock_timeout%3D10000";
			}

			@Override
			String dropDatabase(String name) {
				return "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)";
			}

		},

		MARIADB("mariadb", "MariaDB", "") {

			@Override
			String url(int port, String database) {
				return "jdbc:mariadb://127.0.0.1:" + port + "/" + database
						+ "?connectTimeout=10000&socketTimeout=60000&sessionVariables=innodb_lock_wait_timeout=10,lock_wait_timeout=10";
			}

			@Override
			String r2dbcUrl(int port, String database) {
				return "r2dbc:mariadb://" + USER + ":" + USER + "@127.0.0.1:" + port + "/" + database
						+ "?connectTimeout=PT10S&sessionVariables=innodb_lock_wait_timeout%3D10,lock_wait_timeout%3D10";
			}

			@Override
			String dropDatabase(String name) {
				return "DROP DATABASE IF EXISTS " + name;
			}

		};

		final String scriptName;

		final String displayName;

		final String adminDatabase;

		Server(String scriptName, String displayName, String adminDatabase) {
			this.scriptName = scriptName;
			this.displayName = displayName;
			this.adminDatabase = adminDatabase;
		}

		abstract String url(int port, String database);

		/** The R2DBC URL of a database, with the user and the lock wait time of {@link #url}. */
		abstract String r2dbcUrl(int port, String database);

		abstract String dropDatabase(String name);

	}

}
