package com.example.consumer;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.github.zklock.curator.CuratorLockAdmin;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(properties = "zk.lock.embedded.enabled=true")
class StockServiceTests {

	@Autowired
	private StockService stock;

	@Autowired
	private CuratorLockAdmin admin;

	@Test
	void reserveRunsUnderItsLockAndReleasesIt() {
		assertThat(this.stock.reserve("42")).isEqualTo("/locks/stock/42");
		assertThat(this.admin.heldLockCount()).isZero();
	}

}
