package io.github.zklock.sample;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;
import org.jspecify.annotations.Nullable;

/**
 * Turns the JDBC URL the application is given ({@code spring.datasource.url}) into the R2DBC
 * options of the same database, so that the reactive purchase writes the rows the JDBC purchase
 * writes: the sample's own stand-in for Spring Boot's R2DBC auto-configuration, which it does not
 * use. Two databases, those of {@code ./demo.sh}:
 * <ul>
 * <li>H2, {@code jdbc:h2:<rest>}: r2dbc-h2's {@code url} option is {@code <rest>} as given, settings
 * after {@code ;} included. r2dbc-h2 opens an H2 session as the JDBC driver does, so a file database
 * in {@code AUTO_SERVER} mode is joined the same way: embedded in the process that opened it first,
 * over TCP to that process's server from the others; an in-memory database is the one of this
 * JVM;</li>
 * <li>PostgreSQL, {@code jdbc:postgresql://host[:port]/database[?name=value&...]}: host, port and
 * database as given; the {@code options} parameter ({@code -c name=value}, as the JDBC driver and
 * libpq take it) becomes r2dbc-postgresql's {@code options} map, so that settings such as the
 * demo's {@code lock_timeout} apply to both; any other parameter is passed on as the R2DBC option
 * of that name.</li>
 * </ul>
 * An R2DBC URL ({@code r2dbc:h2:file:///...}) is not used, because the database's own settings
 * after {@code ;} and a file path do not survive its syntax.
 */
final class R2dbcConnectionOptions {

	private static final String H2 = "jdbc:h2:";

	private static final String POSTGRESQL = "jdbc:postgresql://";

	/** r2dbc-h2's option of everything after {@code jdbc:h2:}. */
	private static final Option<String> H2_URL = Option.valueOf("url");

	/** r2dbc-postgresql's option of the server settings of each connection. */
	private static final Option<Map<String, String>> POSTGRESQL_OPTIONS = Option.valueOf("options");

	private R2dbcConnectionOptions() {
	}

	/**
	 * Return the R2DBC options of the database of a JDBC URL.
	 * @param jdbcUrl the JDBC URL
	 * @param user the database user, {@code null} for none
	 * @param password the user's password, {@code null} for none
	 * @return the options, for {@code ConnectionFactories.get(options)}
	 * @throws IllegalArgumentException if the URL is not of H2 or PostgreSQL, or malformed
	 */
	static ConnectionFactoryOptions fromJdbcUrl(String jdbcUrl, @Nullable String user, @Nullable String password) {
		ConnectionFactoryOptions.Builder options = ConnectionFactoryOptions.builder();
		if (jdbcUrl.startsWith(H2)) {
			options.option(ConnectionFactoryOptions.DRIVER, "h2").option(H2_URL, jdbcUrl.substring(H2.length()));
		}
		else if (jdbcUrl.startsWith(POSTGRESQL)) {
			postgresql(jdbcUrl, options);
		}
		else {
			throw new IllegalArgumentException("No R2DBC driver for the JDBC URL '" + jdbcUrl + "': the sample's "
					+ "reactive purchase runs on H2 (jdbc:h2:...) or PostgreSQL (jdbc:postgresql://...)");
		}
		if (user != null) {
			options.option(ConnectionFactoryOptions.USER, user);
		}
		if (password != null) {
			options.option(ConnectionFactoryOptions.PASSWORD, password);
		}
		return options.build();
	}

	private static void postgresql(String jdbcUrl, ConnectionFactoryOptions.Builder options) {
		URI uri;
		try {
			uri = URI.create(jdbcUrl.substring("jdbc:".length()));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Malformed PostgreSQL URL '" + jdbcUrl + "'", ex);
		}
		String database = (uri.getPath() != null && uri.getPath().length() > 1) ? uri.getPath().substring(1) : null;
		if (uri.getHost() == null || database == null) {
			throw new IllegalArgumentException(
					"Expected jdbc:postgresql://host[:port]/database[?parameters], got '" + jdbcUrl + "'");
		}
		options.option(ConnectionFactoryOptions.DRIVER, "postgresql")
			.option(ConnectionFactoryOptions.HOST, uri.getHost())
			.option(ConnectionFactoryOptions.DATABASE, database);
		if (uri.getPort() != -1) {
			options.option(ConnectionFactoryOptions.PORT, uri.getPort());
		}
		if (uri.getRawQuery() == null) {
			return;
		}
		for (String parameter : uri.getRawQuery().split("&")) {
			int equals = parameter.indexOf('=');
			if (equals < 1) {
				continue;
			}
			String name = decode(parameter.substring(0, equals));
			String value = decode(parameter.substring(equals + 1));
			if (name.equals("options")) {
				options.option(POSTGRESQL_OPTIONS, serverSettings(value));
			}
			else {
				options.option(Option.valueOf(name), value);
			}
		}
	}

	/**
	 * The settings of libpq's {@code options}: {@code -c name=value} (or {@code -cname=value}, or
	 * {@code --name=value}), separated by spaces.
	 */
	static Map<String, String> serverSettings(String options) {
		Map<String, String> settings = new LinkedHashMap<>();
		String[] words = options.trim().split("\\s+");
		for (int i = 0; i < words.length; i++) {
			String setting;
			if (words[i].equals("-c") && i + 1 < words.length) {
				setting = words[++i];
			}
			else if (words[i].startsWith("--")) {
				setting = words[i].substring(2);
			}
			else if (words[i].startsWith("-c")) {
				setting = words[i].substring(2);
			}
			else {
				throw new IllegalArgumentException(
						"Expected '-c name=value' settings in options, got '" + options + "'");
			}
			int equals = setting.indexOf('=');
			if (equals < 1) {
				throw new IllegalArgumentException("Expected name=value, got '" + setting + "' in options '" + options
						+ "'");
			}
			settings.put(setting.substring(0, equals).toLowerCase(Locale.ROOT), setting.substring(equals + 1));
		}
		return settings;
	}

	private static String decode(String value) {
		return URLDecoder.decode(value, StandardCharsets.UTF_8);
	}

}
