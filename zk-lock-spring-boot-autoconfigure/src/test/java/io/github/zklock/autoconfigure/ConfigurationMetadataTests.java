package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import io.github.zklock.curator.KeptLocks;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.EmbeddedZooKeeperProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata that IDEs read describes every {@code zk.lock.*} key and hints at the
 * values of the ones with special values. It comes from two jars: this module's (generated from
 * {@link ZkLockProperties} and merged with its {@code additional-spring-configuration-metadata.json})
 * and zk-lock-test's, for {@code zk.lock.embedded.*} (generated from
 * {@link EmbeddedZooKeeperProperties}, with the port hint of its additional metadata). An IDE
 * merges every {@code META-INF/spring-configuration-metadata.json} of the class path; so do these
 * tests.
 */
class ConfigurationMetadataTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	@Test
	void describesEveryZkLockProperty() throws IOException {
		List<Map<String, Object>> properties = new ArrayList<>();
		for (String metadata : allMetadata()) {
			properties.addAll(JsonPath.read(metadata, "$.properties[?(@.name =~ /zk\\.lock\\..*/)]"));
		}
		assertThat(properties).extracting((property) -> property.get("name"))
			.contains("zk.lock.enabled", "zk.lock.connect-string", "zk.lock.root-path", "zk.lock.session-timeout",
					"zk.lock.connection-timeout", "zk.lock.default-wait-time", "zk.lock.default-lock-at-most-for",
					"zk.lock.aspect-order",
					"zk.lock.cache-capacity", "zk.lock.interrupt-on-lost", "zk.lock.fail-fast",
					"zk.lock.retry.base-sleep", "zk.lock.retry.max-retries", "zk.lock.retry.max-sleep",
					"zk.lock.embedded.enabled", "zk.lock.embedded.port", "zk.lock.auth.scheme",
					"zk.lock.auth.credentials", "zk.lock.integration.key-prefix",
					"zk.lock.leadership.key-prefix", "zk.lock.leadership.participant-id", "zk.lock.shedlock.key-prefix",
					"zk.lock.local-handoff.enabled", "zk.lock.local-handoff.max-grants",
					"zk.lock.local-handoff.max-time", "zk.lock.keep.enabled", "zk.lock.keep.max-idle",
					"zk.lock.keep.max-keys", "zk.lock.keep.give-up-wait")
			.doesNotHaveDuplicates();
		assertThat(properties).allSatisfy((property) -> assertThat((String) property.get("description"))
			.as("description of %s", property.get("name"))
			.isNotBlank());
	}

	@Test
	void givesTheDefaultOfEveryPropertyThatHasOne() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(ownMetadata(),
				"$.properties[?(@.name =~ /zk\\.lock\\..*/)]");
		// The processor does not resolve a default taken from a constant of another class (such as
		// zk-lock-core's LocalHandoff): the additional metadata gives those.
		assertThat(properties).filteredOn((property) -> !property.containsKey("defaultValue"))
			.extracting((property) -> property.get("name"))
			.as("properties without a default value in the metadata")
			.containsExactlyInAnyOrder("zk.lock.auth.credentials", "zk.lock.default-lock-at-most-for",
					"zk.lock.leadership.participant-id", "zk.lock.retry.max-sleep", "zk.lock.ssl.enabled",
					"zk.lock.ssl.bundle", "zk.lock.sasl.enabled", "zk.lock.sasl.username", "zk.lock.sasl.password");
		ZkLockProperties defaults = new ZkLockProperties();
		assertThat(defaults.getDefaultLockAtMostFor()).as("unset: no ceiling").isNull();
		assertThat(defaults.getAuth().getCredentials()).isNull();
		assertThat(defaults.getLeadership().getParticipantId()).isNull();
		assertThat(defaults.getRetry().getMaxSleep()).isNull();
		assertThat(defaults.getSsl().isEnabled()).as("unset: on when a bundle is named").isFalse();
		assertThat(defaults.getSsl().getBundle()).isNull();
		assertThat(defaults.getSasl().isEnabled()).as("unset: on when a username is set").isFalse();
		assertThat(defaults.getSasl().getUsername()).isNull();
		assertThat(defaults.getSasl().getPassword()).isNull();
	}

	@Test
	void givesTheLocalHandoffDefaultsOfTheRegistry() throws IOException {
		String own = ownMetadata();
		assertThat(defaultValue(own, "zk.lock.local-handoff.enabled")).isEqualTo(LocalHandoff.DEFAULT.enabled());
		assertThat(defaultValue(own, "zk.lock.local-handoff.max-grants")).isEqualTo(LocalHandoff.DEFAULT.maxGrants());
		assertThat(defaultValue(own, "zk.lock.local-handoff.max-time"))
			.isEqualTo(LocalHandoff.DEFAULT.maxTime().toMillis() + "ms");
		ZkLockProperties.LocalHandoff defaults = new ZkLockProperties().getLocalHandoff();
		assertThat(new LocalHandoff(defaults.isEnabled(), defaults.getMaxGrants(), defaults.getMaxTime()))
			.isEqualTo(LocalHandoff.DEFAULT);
	}

	@Test
	void givesTheKeptLockDefaultsOfTheRegistry() throws IOException {
		String own = ownMetadata();
		assertThat(defaultValue(own, "zk.lock.keep.enabled")).isEqualTo(KeptLocks.DISABLED.enabled());
		assertThat(defaultValue(own, "zk.lock.keep.max-idle"))
			.isEqualTo(KeptLocks.DISABLED.maxIdle().toSeconds() + "s");
		assertThat(defaultValue(own, "zk.lock.keep.max-keys")).isEqualTo(KeptLocks.DISABLED.maxKeys());
		assertThat(defaultValue(own, "zk.lock.keep.give-up-wait"))
			.isEqualTo(KeptLocks.DISABLED.giveUpWait().toMillis() + "ms");
		ZkLockProperties.Keep defaults = new ZkLockProperties().getKeep();
		assertThat(new KeptLocks(defaults.isEnabled(), defaults.getMaxIdle(), defaults.getMaxKeys(),
				defaults.getGiveUpWait())).isEqualTo(KeptLocks.DISABLED);
	}

	@Test
	void hintsAtSpecialValues() throws IOException {
		List<String> hinted = new ArrayList<>();
		for (String metadata : allMetadata()) {
			hinted.addAll(JsonPath.read(metadata, "$.hints[*].name"));
		}
		assertThat(hinted).contains("zk.lock.auth.scheme", "zk.lock.default-wait-time", "zk.lock.embedded.port",
				"zk.lock.connect-string", "zk.lock.default-lock-at-most-for");
		String own = ownMetadata();
		List<String> schemes = JsonPath.read(own, "$.hints[?(@.name == 'zk.lock.auth.scheme')].values[*].value");
		assertThat(schemes).containsExactly("digest");
		List<String> waitTimes = JsonPath.read(own,
				"$.hints[?(@.name == 'zk.lock.default-wait-time')].values[*].value");
		assertThat(waitTimes).containsExactly("-1ms", "0ms", "5s");
		List<String> ceilings = JsonPath.read(own,
				"$.hints[?(@.name == 'zk.lock.default-lock-at-most-for')].values[*].value");
		// No hint for none: it is the property unset (zero is rejected).
		assertThat(ceilings).containsExactly("5m");
	}

	@Test
	void describesTheEmbeddedServerInZkLockTestsMetadataOnly() throws IOException {
		String own = ownMetadata();
		List<String> ownNames = JsonPath.read(own, "$.properties[*].name");
		assertThat(ownNames).contains("zk.lock.connect-string")
			.noneMatch((name) -> name.startsWith("zk.lock.embedded"));
		List<String> ownHints = JsonPath.read(own, "$.hints[*].name");
		assertThat(ownHints).doesNotContain("zk.lock.embedded.port");

		String embedded = metadataOf(EmbeddedZooKeeperProperties.class);
		List<Map<String, Object>> properties = JsonPath.read(embedded, "$.properties[*]");
		assertThat(properties).extracting((property) -> property.get("name"))
			.containsExactlyInAnyOrder("zk.lock.embedded.enabled", "zk.lock.embedded.port");
		assertThat(properties).allSatisfy((property) -> assertThat(property.get("sourceType"))
			.isEqualTo(EmbeddedZooKeeperProperties.class.getName()));
		List<Integer> defaultPort = JsonPath.read(embedded,
				"$.properties[?(@.name == 'zk.lock.embedded.port')].defaultValue");
		assertThat(defaultPort).containsExactly(0);
		List<Integer> ports = JsonPath.read(embedded, "$.hints[?(@.name == 'zk.lock.embedded.port')].values[*].value");
		assertThat(ports).containsExactly(0, 2181);
	}

	private static Object defaultValue(String metadata, String name) {
		List<Object> values = JsonPath.read(metadata, "$.properties[?(@.name == '" + name + "')].defaultValue");
		assertThat(values).as("default value of %s", name).hasSize(1);
		return values.get(0);
	}

	private static String ownMetadata() throws IOException {
		return metadataOf(ZkLockProperties.class);
	}

	/**
	 * The metadata file generated from the given properties class, found by its source type.
	 */
	private static String metadataOf(Class<?> propertiesClass) throws IOException {
		List<String> found = new ArrayList<>();
		for (String metadata : allMetadata()) {
			List<String> sourceTypes = JsonPath.read(metadata, "$.groups[*].sourceType");
			if (sourceTypes.contains(propertiesClass.getName())) {
				found.add(metadata);
			}
		}
		assertThat(found).as("metadata generated from %s", propertiesClass.getName()).hasSize(1);
		return found.get(0);
	}

	/**
	 * Every metadata file of the class path that names a {@code zk.lock} key (Spring Boot's own
	 * jars have theirs too).
	 */
	private static List<String> allMetadata() throws IOException {
		List<String> all = new ArrayList<>();
		for (URL url : Collections.list(ConfigurationMetadataTests.class.getClassLoader().getResources(METADATA))) {
			try (InputStream in = url.openStream()) {
				String metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (metadata.contains("\"zk.lock.")) {
					all.add(metadata);
				}
			}
		}
		assertThat(all).as("zk-lock's metadata and zk-lock-test's").hasSize(2);
		return all;
	}

}
