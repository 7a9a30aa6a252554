package io.github.zklock.docs.testing;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.github.zklock.LockContext;
import io.github.zklock.docs.testing.OrderApplication.OrderService;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guide's first testing example: a {@code @SpringBootTest} on an embedded ZooKeeper.
 */
// tag::test[]
@SpringBootTest
@AutoConfigureEmbeddedZooKeeper
class OrderServiceTests {

	@Autowired
	OrderService orders; // its @DistributedLock methods lock on the embedded server

	@Test
	void placesAnOrderOnce() {
		assertThat(this.orders.place("42")).isTrue();
		assertThat(this.orders.place("42")).isFalse();
	}

}
// end::test[]
