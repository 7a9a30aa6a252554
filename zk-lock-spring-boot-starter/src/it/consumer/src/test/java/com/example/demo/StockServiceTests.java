package com.example.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

// tag::test[]
@SpringBootTest
@AutoConfigureEmbeddedZooKeeper // a real ZooKeeper server in the test's JVM, instead of zk.lock.connect-string
class StockServiceTests {

	@Autowired
	private StockService stock;

	@Test
	void concurrentPurchasesSellEachItemOnce() throws Exception {
		Callable<Integer> purchase = () -> this.stock.purchase("apple");
		ExecutorService buyers = Executors.newFixedThreadPool(3);
		List<Integer> left = new ArrayList<>();
		try {
			for (Future<Integer> bought : buyers.invokeAll(List.of(purchase, purchase, purchase), 30, TimeUnit.SECONDS)) {
				left.add(bought.get());
			}
		}
		finally {
			buyers.shutdownNow();
		}
		assertThat(left).containsExactlyInAnyOrder(2, 1, 0); // one at a time: no two saw the same stock
		assertThatIllegalStateException().isThrownBy(() -> this.stock.purchase("apple")).withMessage("Sold out: apple");
	}

}
// end::test[]
