package io.github.zklock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata that IDEs read (generated from {@link ZkLockProperties} and merged
 * with {@code additional-spring-configuration-metadata.json}) describes every {@code zk.lock.*}
 * key and hints at the values of the ones with special values.
 */
class ConfigurationMetadataTests {

	@Test
	void describesEveryZkLockProperty() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(metadata(), "$.properties[?(@.name =~ /zk\\.lock\\..*/)]");
		assertThat(properties).extracting((property) -> property.get("name"))
			.contains("zk.lock.enabled", "zk.lock.connect-string", "zk.lock.root-path", "zk.lock.session-timeout",
					"zk.lock.connection-timeout", "zk.lock.default-wait-time", "zk.lock.aspect-order",
					"zk.lock.cache-capacity", "zk.lock.interrupt-on-lost", "zk.lock.fail-fast",
					"zk.lock.retry.base-sleep", "zk.lock.retry.max-retries", "zk.lock.retry.max-sleep",
					"zk.lock.embedded.enabled", "zk.lock.embedded.port", "zk.lock.auth.scheme",
					"zk.lock.auth.credentials");
		assertThat(properties).allSatisfy((property) -> assertThat((String) property.get("description"))
			.as("description of %s", property.get("name"))
			.isNotBlank());
	}

	@Test
	void hintsAtSpecialValues() throws IOException {
		List<String> hinted = JsonPath.read(metadata(), "$.hints[*].name");
		assertThat(hinted).contains("zk.lock.auth.scheme", "zk.lock.default-wait-time", "zk.lock.embedded.port",
				"zk.lock.connect-string");
		List<String> schemes = JsonPath.read(metadata(), "$.hints[?(@.name == 'zk.lock.auth.scheme')].values[*].value");
		assertThat(schemes).containsExactly("digest");
	}

	private static String metadata() throws IOException {
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
	}

}
