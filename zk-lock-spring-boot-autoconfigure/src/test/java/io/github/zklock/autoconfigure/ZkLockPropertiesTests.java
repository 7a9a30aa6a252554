package io.github.zklock.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.test.EmbeddedZooKeeper;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.EmbeddedZooKeeperProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the validation and the masking of {@link ZkLockProperties}, bound the way the
 * auto-configuration binds them (no ZooKeeper needed), with zk-lock-test's
 * {@link EmbeddedZooKeeperProperties} ({@code zk.lock.embedded.*}) beside them. The connect string
 * is checked when the client is built, not when bound: that part runs the auto-configurations on
 * an embedded server.
 */
class ZkLockPropertiesTests {

	private static final String SECRET = "s3cret-7f2a9";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesConfiguration.class);

	@Test
	void bindsDefaultsWithoutErrors() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			ZkLockProperties properties = context.getBean(ZkLockProperties.class);
			assertThat(properties.isFailFast()).isFalse();
			assertThat(properties.getDefaultLockAtMostFor()).as("unset: no ceiling").isNull();
			assertThat(properties.getAuth().getScheme()).isEqualTo("digest");
			assertThat(properties.getAuth().getCredentials()).isNull();
			assertThat(properties.getAuth().hasCredentials()).isFalse();
			assertThat(properties.getLeadership().getKeyPrefix()).isEqualTo("/leadership");
			assertThat(properties.getLeadership().getParticipantId()).isNull();
			assertThat(properties.getShedlock().getKeyPrefix()).isEqualTo("/shedlock");
			assertThat(properties.getLocalHandoff().isEnabled()).isTrue();
			assertThat(properties.getLocalHandoff().getMaxGrants()).isEqualTo(LocalHandoff.DEFAULT_MAX_GRANTS);
			assertThat(properties.getLocalHandoff().getMaxTime()).isEqualTo(LocalHandoff.DEFAULT_MAX_TIME);
		});
	}

	@Test
	void bindsTheLocalHandoffProperties() {
		this.contextRunner
			.withPropertyValues("zk.lock.local-handoff.enabled=false", "zk.lock.local-handoff.max-grants=8",
					"zk.lock.local-handoff.max-time=20ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ZkLockProperties.LocalHandoff handoff = context.getBean(ZkLockProperties.class).getLocalHandoff();
				assertThat(handoff.isEnabled()).isFalse();
				assertThat(handoff.getMaxGrants()).isEqualTo(8);
				assertThat(handoff.getMaxTime()).isEqualTo(Duration.ofMillis(20));
			});
	}

	@Test
	void reportsBadLocalHandoffBoundsAtOnceNamingEachProperty() {
		this.contextRunner
			.withPropertyValues("zk.lock.local-handoff.max-grants=0", "zk.lock.local-handoff.max-time=0ms")
			.run((context) -> {
				assertThat(context).hasFailed();
				BindValidationException ex = cause(context.getStartupFailure(), BindValidationException.class);
				assertThat(ex.getValidationErrors().getAllErrors()).hasSize(2)
					.allSatisfy((error) -> assertThat(error).isInstanceOf(FieldError.class))
					.extracting((error) -> ((FieldError) error).getField())
					.containsExactlyInAnyOrder("localHandoff.maxGrants", "localHandoff.maxTime");
				assertThat(errorMessages(context.getStartupFailure()))
					.containsExactlyInAnyOrder("zk.lock.local-handoff.max-grants must be at least 1, was 0",
							"zk.lock.local-handoff.max-time must be between 1 ms and 2147483647 ms (about 24 days), "
									+ "was PT0S");
			});
	}

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource({ "max-grants, -1", "max-grants, 0", "max-time, -50ms", "max-time, 0s", "max-time, 500us" })
	void rejectsALocalHandoffBoundThatIsNotPositive(String property, String value) {
		this.contextRunner.withPropertyValues("zk.lock.local-handoff." + property + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(errorMessages(context.getStartupFailure())).singleElement()
				.asString()
				.startsWith("zk.lock.local-handoff." + property + " must be");
		});
	}

	@Test
	void bindsTheLeadershipAndShedLockProperties() {
		this.contextRunner
			.withPropertyValues("zk.lock.leadership.key-prefix=/jobs/leaders",
					"zk.lock.leadership.participant-id=billing-7", "zk.lock.shedlock.key-prefix=/jobs/shedlock")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ZkLockProperties properties = context.getBean(ZkLockProperties.class);
				assertThat(properties.getLeadership().getKeyPrefix()).isEqualTo("/jobs/leaders");
				assertThat(properties.getLeadership().getParticipantId()).isEqualTo("billing-7");
				assertThat(properties.getShedlock().getKeyPrefix()).isEqualTo("/jobs/shedlock");
			});
		this.contextRunner.withPropertyValues("zk.lock.leadership.key-prefix=", "zk.lock.shedlock.key-prefix=")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ZkLockProperties properties = context.getBean(ZkLockProperties.class);
				assertThat(properties.getLeadership().getKeyPrefix()).isEmpty();
				assertThat(properties.getShedlock().getKeyPrefix()).isEmpty();
			});
	}

	@Test
	void reportsBadLeadershipAndShedLockValuesAtOnceNamingEachProperty() {
		this.contextRunner
			.withPropertyValues("zk.lock.leadership.key-prefix=leaders", "zk.lock.leadership.participant-id=",
					"zk.lock.shedlock.key-prefix=/shedlock/")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(errorMessages(context.getStartupFailure())).hasSize(3)
					.anySatisfy((message) -> assertThat(message)
						.startsWith("zk.lock.leadership.key-prefix 'leaders' is not a legal lock key"))
					.anySatisfy((message) -> assertThat(message)
						.startsWith("zk.lock.leadership.participant-id must not be blank"))
					.anySatisfy((message) -> assertThat(message)
						.startsWith("zk.lock.shedlock.key-prefix '/shedlock/' is not a legal lock key"));
			});
	}

	@Test
	void acceptsBoundaryValues() {
		this.contextRunner
			.withPropertyValues("zk.lock.retry.max-retries=0", "zk.lock.embedded.port=65535", "zk.lock.root-path=/",
					"zk.lock.session-timeout=1ms", "zk.lock.connection-timeout=24d", "zk.lock.retry.max-sleep=1ms",
					"zk.lock.cache-capacity=1", "zk.lock.default-wait-time=-1ms",
					"zk.lock.connect-string=zk1:2181,zk2:2182/apps/locking", "zk.lock.fail-fast=true",
					"zk.lock.local-handoff.max-grants=1", "zk.lock.local-handoff.max-time=1ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ZkLockProperties.class).isFailFast()).isTrue();
			});
		this.contextRunner.withPropertyValues("zk.lock.retry.max-retries=29", "zk.lock.root-path=/a/b-c/d.e")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void reportsEveryBadValueAtOnceNamingEachProperty() {
		this.contextRunner
			.withPropertyValues("zk.lock.session-timeout=0s", "zk.lock.connection-timeout=-1s",
					"zk.lock.retry.base-sleep=0ms", "zk.lock.retry.max-sleep=-2s", "zk.lock.retry.max-retries=30",
					"zk.lock.cache-capacity=0", "zk.lock.root-path=locks/", "zk.lock.default-wait-time=-3s",
					"zk.lock.default-lock-at-most-for=-1s", "zk.lock.connect-string=host:port")
			.run((context) -> {
				assertThat(context).hasFailed();
				// The connect string is checked when the client is built (see below), not here.
				assertThat(errorMessages(context.getStartupFailure())).hasSize(9)
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.session-timeout must be between"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.connection-timeout must be"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.retry.base-sleep must be"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.retry.max-sleep must be"))
					.anySatisfy((message) -> assertThat(message)
						.isEqualTo("zk.lock.retry.max-retries must be between 0 and 29 (Curator's limit), was 30"))
					.anySatisfy((message) -> assertThat(message)
						.isEqualTo("zk.lock.cache-capacity must be positive, was 0"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.root-path 'locks/'"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.default-wait-time must be"))
					.anySatisfy((message) -> assertThat(message).startsWith("zk.lock.default-lock-at-most-for must be"))
					.noneSatisfy((message) -> assertThat(message).contains("connect-string"));
			});
	}

	@Test
	void rejectsAnEmbeddedPortOutOfRangeNamingTheProperty() {
		this.contextRunner.withPropertyValues("zk.lock.embedded.port=70000").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(errorMessages(context.getStartupFailure())).singleElement()
				.isEqualTo("zk.lock.embedded.port must be between 0 (a free port) and 65535, was 70000");
		});
	}

	@ParameterizedTest(name = "zk.lock.default-wait-time={0}")
	@CsvSource({ "-5s, PT-5S", "-2ms, PT-0.002S", "-1s, PT-1S" })
	void rejectsANegativeDefaultWaitTimeOtherThanWaitingWithoutLimit(String value, Duration bound) {
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=" + value).run((context) -> {
			assertThat(context).hasFailed();
			BindValidationException ex = cause(context.getStartupFailure(), BindValidationException.class);
			assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
				.isInstanceOfSatisfying(FieldError.class, (error) -> {
					assertThat(error.getField()).isEqualTo("defaultWaitTime");
					assertThat(error.getDefaultMessage()).isEqualTo("zk.lock.default-wait-time must be 0 for one "
							+ "attempt, a positive duration, or -1ms to wait without limit, was "
							+ bound);
				});
		});
	}

	@ParameterizedTest(name = "zk.lock.default-wait-time={0}")
	@CsvSource({ "-1ms, -1", "0s, 0", "5s, 5000" })
	void acceptsTheDefaultWaitTimesThatHaveAMeaning(String value, long millis) {
		this.contextRunner.withPropertyValues("zk.lock.default-wait-time=" + value).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(ZkLockProperties.class).getDefaultWaitTime())
				.isEqualTo(Duration.ofMillis(millis));
		});
	}

	@ParameterizedTest(name = "zk.lock.default-lock-at-most-for={0}")
	@CsvSource({ "-1ms, PT-0.001S", "-5s, PT-5S", "0, PT0S", "0s, PT0S" })
	void rejectsAZeroOrNegativeDefaultLockAtMostFor(String value, Duration bound) {
		this.contextRunner.withPropertyValues("zk.lock.default-lock-at-most-for=" + value).run((context) -> {
			assertThat(context).hasFailed();
			BindValidationException ex = cause(context.getStartupFailure(), BindValidationException.class);
			assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
				.isInstanceOfSatisfying(FieldError.class, (error) -> {
					assertThat(error.getField()).isEqualTo("defaultLockAtMostFor");
					assertThat(error.getDefaultMessage()).isEqualTo("zk.lock.default-lock-at-most-for must be a "
							+ "positive duration; leave it unset for no ceiling, was " + bound);
				});
		});
	}

	@ParameterizedTest(name = "zk.lock.default-lock-at-most-for={0}")
	@CsvSource({ "1, 1", "1500ms, 1500", "PT5M, 300000" })
	void acceptsAPositiveDefaultLockAtMostFor(String value, long millis) {
		this.contextRunner.withPropertyValues("zk.lock.default-lock-at-most-for=" + value).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(ZkLockProperties.class).getDefaultLockAtMostFor())
				.isEqualTo(Duration.ofMillis(millis));
		});
	}

	@Test
	void keysFieldErrorsByPropertySoThatBootCanShowTheirOrigin() {
		this.contextRunner.withPropertyValues("zk.lock.retry.base-sleep=0ms").run((context) -> {
			BindValidationException ex = cause(context.getStartupFailure(), BindValidationException.class);
			assertThat(ex.getValidationErrors().getName().toString()).isEqualTo("zk.lock");
			assertThat(ex.getValidationErrors().getAllErrors()).singleElement()
				.isInstanceOfSatisfying(FieldError.class, (error) -> {
					assertThat(error.getField()).isEqualTo("retry.baseSleep");
					assertThat(error.getRejectedValue()).isEqualTo(Duration.ZERO);
				});
		});
	}

	@Test
	void doesNotCheckTheConnectStringWhenTheEmbeddedServerReplacesIt() {
		// Bound alone, an empty connect string is no error: it is checked when the client uses it.
		this.contextRunner.withPropertyValues("zk.lock.connect-string=")
			.run((context) -> assertThat(context).hasNotFailed());
		ApplicationContextRunner application = new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=");
		application.withPropertyValues("zk.lock.embedded.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(CuratorFramework.class).getZookeeperClient().getCurrentConnectionString())
				.isEqualTo(context.getBean(EmbeddedZooKeeper.class).getConnectString());
		});
		application.run((context) -> {
			assertThat(context).hasFailed();
			InvalidConfigurationPropertyValueException ex = cause(context.getStartupFailure(),
					InvalidConfigurationPropertyValueException.class);
			assertThat(ex.getName()).isEqualTo("zk.lock.connect-string");
			assertThat(ex.getReason()).startsWith("zk.lock.connect-string must be set");
		});
	}

	@Test
	void rejectsDigestCredentialsWithoutUserNeverShowingThem() {
		for (String credentials : new String[] { SECRET, ":" + SECRET }) {
			this.contextRunner.withPropertyValues("zk.lock.auth.credentials=" + credentials).run((context) -> {
				assertThat(context).hasFailed();
				assertThat(errorMessages(context.getStartupFailure())).singleElement()
					.asString()
					.contains("zk.lock.auth.credentials must have the form user:password");
				assertThat(allText(context.getStartupFailure())).doesNotContain(SECRET);
			});
		}
	}

	@Test
	void rejectsCredentialsWithoutScheme() {
		this.contextRunner.withPropertyValues("zk.lock.auth.credentials=app:" + SECRET, "zk.lock.auth.scheme=")
			.run((context) -> {
				assertThat(errorMessages(context.getStartupFailure())).singleElement()
					.asString()
					.startsWith("zk.lock.auth.scheme must be set");
				assertThat(allText(context.getStartupFailure())).doesNotContain(SECRET);
			});
	}

	@Test
	void acceptsOtherSchemesAsTheyAre() {
		this.contextRunner.withPropertyValues("zk.lock.auth.scheme=custom", "zk.lock.auth.credentials=opaque-token")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void masksCredentialsInToString() {
		ZkLockProperties.Auth auth = new ZkLockProperties.Auth();
		assertThat(auth).hasToString("Auth[scheme=digest, credentials=none]");
		auth.setCredentials("app:" + SECRET);
		assertThat(auth.hasCredentials()).isTrue();
		assertThat(auth.toString()).isEqualTo("Auth[scheme=digest, credentials=******]").doesNotContain(SECRET);
		auth.setCredentials("");
		assertThat(auth.hasCredentials()).isFalse();
	}

	private static List<String> errorMessages(Throwable failure) {
		return cause(failure, BindValidationException.class).getValidationErrors()
			.getAllErrors()
			.stream()
			.map(ObjectError::getDefaultMessage)
			.toList();
	}

	private static String allText(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable current = failure; current != null; current = current.getCause()) {
			text.append(current).append('\n');
		}
		return text.toString();
	}

	private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (type.isInstance(current)) {
				return type.cast(current);
			}
		}
		throw new AssertionError("No " + type.getName() + " in the cause chain of " + failure, failure);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ ZkLockProperties.class, EmbeddedZooKeeperProperties.class })
	static class PropertiesConfiguration {

	}

}
