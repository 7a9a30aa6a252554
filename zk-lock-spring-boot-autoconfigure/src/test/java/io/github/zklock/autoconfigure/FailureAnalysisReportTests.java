package io.github.zklock.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.DefaultResourceLoader;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.test.EmbeddedZooKeeperAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A {@link SpringApplication} that fails to start prints the analysis of zk-lock's failure
 * analyzers: they are registered in {@code META-INF/spring.factories} and win over Spring Boot's
 * generic ones. A bad property value gets Spring Boot's binding analysis, with zk-lock's reason;
 * a malformed connect string, checked when the client is built, Spring Boot's analysis of an
 * invalid property value.
 */
@ExtendWith(OutputCaptureExtension.class)
class FailureAnalysisReportTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void reportsUnreachableZooKeeper(CapturedOutput output) throws Exception {
		int closedPort = FailFastTests.closedPort();
		SpringApplication application = application(LockingApplication.class);
		assertTimeoutPreemptively(Duration.ofSeconds(30),
				() -> assertThatException().isThrownBy(() -> application.run("--zk.lock.fail-fast=true",
						"--zk.lock.connect-string=127.0.0.1:" + closedPort, "--zk.lock.connection-timeout=500ms")));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("zk-lock could not connect to ZooKeeper at '127.0.0.1:" + closedPort + "' within 500 ms.")
			.contains("Check that the ZooKeeper ensemble is running and reachable");
	}

	@Test
	void reportsEmbeddedModeWithoutCuratorTest(CapturedOutput output) {
		SpringApplication application = application(EmbeddedApplication.class);
		application.setResourceLoader(new DefaultResourceLoader(new FilteredClassLoader("org.apache.curator.test")));
		assertThatException().isThrownBy(() -> application.run("--zk.lock.embedded.enabled=true"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("(with org.apache.curator:curator-test), is not on the class path")
			.contains("Add io.github.zklock:zk-lock-test as a dependency");
	}

	@Test
	void reportsEmbeddedModeWithoutZkLockTest(CapturedOutput output) {
		SpringApplication application = application(LockingApplication.class);
		application.setResourceLoader(new DefaultResourceLoader(new FilteredClassLoader("io.github.zklock.test")));
		assertThatException().isThrownBy(() -> application.run("--zk.lock.embedded.enabled=true"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("but io.github.zklock:zk-lock-test, which provides it")
			.contains("is not on the class path")
			.contains("Add io.github.zklock:zk-lock-test as a dependency");
	}

	@Test
	void reportsMalformedConnectStringNamingTheProperty(CapturedOutput output) {
		assertThatException()
			.isThrownBy(() -> application(LockingApplication.class).run("--zk.lock.connect-string=host:port"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid value 'host:port' for configuration property 'zk.lock.connect-string'")
			.contains("from property source \"commandLineArgs\"")
			.contains("zk.lock.connect-string 'host:port' is malformed");
	}

	@Test
	void reportsMalformedPathTemplate(CapturedOutput output) {
		assertThatException().isThrownBy(() -> application(MalformedTemplateApplication.class)
			.run("--zk.lock.connect-string=" + zooKeeper.getConnectString()));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("A @DistributedLock path is invalid: @DistributedLock on ")
			.contains("Fix the path of the @DistributedLock annotation on that method.");
	}

	@Test
	void reportsIllegalRootPathAsABindingFailureWithItsOrigin(CapturedOutput output) {
		assertThatException().isThrownBy(() -> application(LockingApplication.class)
			.run("--zk.lock.connect-string=" + zooKeeper.getConnectString(), "--zk.lock.root-path=locks"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Value: \"locks\"")
			.contains("Origin: \"zk.lock.root-path\" from property source \"commandLineArgs\"")
			.contains("Reason: zk.lock.root-path 'locks' is not a legal ZooKeeper path")
			.contains("Update your application's configuration");
	}

	private static SpringApplication application(Class<?> source) {
		SpringApplication application = new SpringApplication(source);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setBannerMode(Banner.Mode.OFF);
		application.setLogStartupInfo(false);
		return application;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(ZkLockAutoConfiguration.class)
	static class LockingApplication {

	}

	/** An application with zk-lock-test, which brings the embedded server's auto-configuration. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ EmbeddedZooKeeperAutoConfiguration.class, ZkLockAutoConfiguration.class })
	static class EmbeddedApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(ZkLockAutoConfiguration.class)
	static class MalformedTemplateApplication {

		@Bean
		MalformedTemplateService malformedTemplateService() {
			return new MalformedTemplateService();
		}

	}

	static class MalformedTemplateService {

		@DistributedLock(path = "/orders/#{#id")
		public void lock(String id) {
		}

	}

}
