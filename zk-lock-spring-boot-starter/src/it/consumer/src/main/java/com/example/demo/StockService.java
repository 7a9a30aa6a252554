package com.example.demo;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;

import io.github.zklock.LockAssert;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;

// tag::service[]
@Service
public class StockService {

	private final Map<String, Integer> stock = new ConcurrentHashMap<>(Map.of("apple", 3));

	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.EXCLUSIVE, waitTime = "2s")
	public int purchase(String sku) {
		LockAssert.assertHeld(); // fails at once if the call bypassed the proxy
		int left = this.stock.getOrDefault(sku, 0);
		if (left == 0) {
			throw new IllegalStateException("Sold out: " + sku);
		}
		this.stock.put(sku, left - 1); // read, check, write: one caller at a time per sku
		return left - 1;
	}

}
// end::service[]
