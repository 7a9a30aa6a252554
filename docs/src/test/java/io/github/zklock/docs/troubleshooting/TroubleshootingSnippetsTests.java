package io.github.zklock.docs.troubleshooting;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.docs.testing.OrderApplication;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The troubleshooting chapter's snippets behave as it says: a locked method called from its own
 * class runs without its lock and {@code LockAssert.assertHeld()} reports it, the call through
 * another bean locks; the log levels it suggests apply.
 */
class TroubleshootingSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void selfInvocationRunsUnlockedAndTheCallThroughAnotherBeanLocks() {
		try (ConfigurableApplicationContext context = start()) {
			InvoiceService invoices = context.getBean(InvoiceService.class);
			assertThat(invoices.issue("7")).isEqualTo("issued 7");
			assertThatIllegalStateException().isThrownBy(() -> invoices.issueAll("8"));
			assertThat(context.getBean(InvoiceBatch.class).issueAll("8", "9")).isEqualTo("issued 8issued 9");
			assertThat(context.getBean(CuratorLockAdmin.class).heldLockCount()).isZero();
		}
	}

	@Test
	void suggestedLogLevelsApply() {
		try (ConfigurableApplicationContext context = start()) {
			LoggingSystem logging = context.getBean(LoggingSystem.class);
			assertThat(logging.getLoggerConfiguration("io.github.zklock").getEffectiveLevel()).isEqualTo(LogLevel.DEBUG);
			assertThat(logging.getLoggerConfiguration("org.apache.zookeeper.ClientCnxn").getEffectiveLevel())
				.isEqualTo(LogLevel.INFO);
		}
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(OrderApplication.class, InvoiceService.class, InvoiceBatch.class)
			.web(WebApplicationType.NONE)
			.properties("spring.config.import=classpath:production/troubleshooting.properties")
			.run("--zk.lock.connect-string=" + zooKeeper.getConnectString(), "--zk.lock.default-wait-time=5s");
	}

}
