package io.github.zklock.autoconfigure;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.DistributedSemaphore;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Tests for {@link InvalidLockPathFailureAnalyzer}, on the failures of real starts and of the
 * registry.
 */
class InvalidLockPathFailureAnalyzerTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final InvalidLockPathFailureAnalyzer analyzer = new InvalidLockPathFailureAnalyzer();

	@Test
	void analyzesAMalformedTemplateNamingTheMethod() {
		FailureAnalysis analysis = this.analyzer.analyze(startupFailure(MalformedTemplateService.class));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).startsWith("A @DistributedLock path is invalid: @DistributedLock on ")
			.contains("MalformedTemplateService.lock")
			.contains("/orders/#{#id");
		assertThat(analysis.getAction()).startsWith("Fix the path of the @DistributedLock annotation on that method.")
			.contains("#{...} SpEL templates")
			.contains("/orders/#{#orderId}");
	}

	@Test
	void analyzesAnIllegalStaticPathNamingTheMethod() {
		FailureAnalysis analysis = this.analyzer.analyze(startupFailure(IllegalStaticPathService.class));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains("IllegalStaticPathService.lock").contains("/a/./b");
		assertThat(analysis.getAction()).contains("no empty, '.' or '..' segment");
	}

	@Test
	void analyzesAMalformedSemaphoreTemplateNamingTheMethod() {
		FailureAnalysis analysis = this.analyzer.analyze(startupFailure(MalformedSemaphoreService.class));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription())
			.startsWith("A @DistributedSemaphore path is invalid: @DistributedSemaphore on ")
			.contains("MalformedSemaphoreService.call")
			.contains("/partner/#{#id");
		assertThat(analysis.getAction()).startsWith("Fix the path of the @DistributedSemaphore annotation on that method.");
	}

	@Test
	void analyzesAnIllegalSecondKeyOfAMultiLockNamingTheMethod() {
		FailureAnalysis analysis = this.analyzer.analyze(startupFailure(IllegalSecondKeyService.class));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).startsWith("A @DistributedLock path is invalid: @DistributedLock on ")
			.contains("IllegalSecondKeyService.transfer")
			.contains("/account/../b");
	}

	@Test
	void analyzesAnIllegalRootPathOfTheRegistry() throws Exception {
		CuratorFramework client = zooKeeper.newClient();
		InvalidLockPathException ex = catchThrowableOfType(InvalidLockPathException.class,
				() -> new CuratorLockRegistry(client, "locks", 10));
		FailureAnalysis analysis = this.analyzer.analyze(new IllegalStateException("wrapped", ex));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains("'locks'");
		assertThat(analysis.getAction()).startsWith("Set zk.lock.root-path to an absolute ZooKeeper path");
	}

	@Test
	void analyzesOtherInvalidPaths() {
		FailureAnalysis analysis = this.analyzer.analyze(new InvalidLockPathException("Lock path must name a znode"));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getAction()).startsWith("Fix the lock path named above.");
	}

	private Throwable startupFailure(Class<?> serviceClass) {
		Throwable[] failure = new Throwable[1];
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
			.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
			.withBean(serviceClass)
			.run((context) -> failure[0] = context.getStartupFailure());
		assertThat(failure[0]).isNotNull();
		return failure[0];
	}

	static class MalformedTemplateService {

		@DistributedLock(path = "/orders/#{#id")
		public void lock(String id) {
		}

	}

	static class MalformedSemaphoreService {

		@DistributedSemaphore(path = "/partner/#{#id", permits = 2)
		public void call(String id) {
		}

	}

	static class IllegalSecondKeyService {

		@DistributedLock(path = { "/account/#{#from}", "/account/../b" })
		public void transfer(String from) {
		}

	}

	static class IllegalStaticPathService {

		@DistributedLock(path = "/a/./b")
		public void lock() {
		}

	}

}
