package io.github.zklock.docs.testing;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The guide's second testing example: two instances of an application on one ZooKeeper server.
 */
// tag::test[]
class TwoInstancesTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension(); // one server for the class

	private final ApplicationContextRunner instance = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString());

	@Test
	void secondInstanceIsRefusedWhileTheFirstHoldsTheKey() {
		this.instance.run((first) -> this.instance.run((second) -> {
			LockTemplate one = first.getBean(LockTemplate.class);
			LockTemplate two = second.getBean(LockTemplate.class);
			one.execute("/orders/42", LockMode.EXCLUSIVE, Duration.ZERO, (held) -> {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> two.acquire("/orders/42", LockMode.EXCLUSIVE, Duration.ZERO));
				return null;
			});
			Boolean grantedAfterwards = two.execute("/orders/42", LockMode.EXCLUSIVE, Duration.ZERO, LockHandle::isHeld);
			assertThat(grantedAfterwards).isTrue();
		}));
	}

}
// end::test[]
