package com.example.consumer;

import org.springframework.stereotype.Service;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.annotation.DistributedLock;

@Service
public class StockService {

	/** Returns the znode path of the lock it runs under. */
	@DistributedLock(path = "/stock/#{#sku}", mode = LockMode.WRITE, waitTime = "2s")
	public String reserve(String sku) {
		return LockContext.current().map(LockHandle::path).orElse("no lock");
	}

}
