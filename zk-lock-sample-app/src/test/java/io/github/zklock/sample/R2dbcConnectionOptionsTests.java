package io.github.zklock.sample;

import java.util.Map;

import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link R2dbcConnectionOptions}: the R2DBC options of the JDBC URLs the demo gives the
 * instances.
 */
class R2dbcConnectionOptionsTests {

	@Test
	void h2KeepsEverythingAfterTheJdbcPrefixAsTheDriversUrl() {
		ConnectionFactoryOptions options = R2dbcConnectionOptions.fromJdbcUrl(
				"jdbc:h2:file:/tmp/demo/db/stock;AUTO_SERVER=TRUE;LOCK_TIMEOUT=30000", "sa", "");
		assertThat(options.getValue(ConnectionFactoryOptions.DRIVER)).isEqualTo("h2");
		assertThat(options.getValue(Option.valueOf("url")))
			.isEqualTo("file:/tmp/demo/db/stock;AUTO_SERVER=TRUE;LOCK_TIMEOUT=30000");
		assertThat(options.getValue(ConnectionFactoryOptions.USER)).isEqualTo("sa");
		assertThat(options.getValue(ConnectionFactoryOptions.PASSWORD)).hasToString("");
	}

	@Test
	void postgresqlTakesHostPortDatabaseAndTheServerSettingsOfTheOptionsParameter() {
		ConnectionFactoryOptions options = R2dbcConnectionOptions.fromJdbcUrl(
				"jdbc:postgresql://127.0.0.1:25432/zklock_demo?options=-c%20lock_timeout%3D30s&sslMode=disable",
				"zklock", "secret");
		assertThat(options.getValue(ConnectionFactoryOptions.DRIVER)).isEqualTo("postgresql");
		assertThat(options.getValue(ConnectionFactoryOptions.HOST)).isEqualTo("127.0.0.1");
		assertThat(options.getValue(ConnectionFactoryOptions.PORT)).isEqualTo(25432);
		assertThat(options.getValue(ConnectionFactoryOptions.DATABASE)).isEqualTo("zklock_demo");
		assertThat(options.getValue(Option.valueOf("options"))).isEqualTo(Map.of("lock_timeout", "30s"));
		assertThat(options.getValue(Option.valueOf("sslMode"))).isEqualTo("disable");
		assertThat(options.getValue(ConnectionFactoryOptions.USER)).isEqualTo("zklock");
	}

	@Test
	void serverSettingsTakeEachOfLibpqsSpellings() {
		assertThat(
				R2dbcConnectionOptions.serverSettings("-c lock_timeout=30s -cstatement_timeout=5s --search_path=demo"))
			.containsExactly(Map.entry("lock_timeout", "30s"), Map.entry("statement_timeout", "5s"),
					Map.entry("search_path", "demo"));
	}

	@Test
	void otherDatabasesAndMalformedUrlsAreRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcConnectionOptions.fromJdbcUrl("jdbc:mariadb://localhost/db", null, null))
			.withMessageContaining("H2 (jdbc:h2:...) or PostgreSQL");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcConnectionOptions.fromJdbcUrl("jdbc:postgresql://localhost/", null, null))
			.withMessageContaining("jdbc:postgresql://host[:port]/database");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> R2dbcConnectionOptions.fromJdbcUrl("jdbc:postgresql://h/db?options=lock_timeout", null, null))
			.withMessageContaining("'-c name=value'");
	}

}
