package io.github.zklock.docs.migrating;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;

import io.github.zklock.annotation.DistributedLock;

/**
 * The guide's migration from lock4j's {@code @Lock4j}: the same keys, wait and expiry, as
 * {@code @DistributedLock}'s path template, wait time and ceiling.
 */
@Service
public class InventoryService {

	private final Map<String, Integer> reserved = new ConcurrentHashMap<>();

	// tag::lock4j[]
	@DistributedLock(path = "/inventory/#{#sku}", waitTime = "3s", lockAtMostFor = "30s")
	public int reserve(String sku, int quantity) {
		return this.reserved.merge(sku, quantity, Integer::sum);
	}
	// end::lock4j[]

}
