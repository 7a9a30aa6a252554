package io.github.zklock.docs.locks;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;

/**
 * The guide's configuration of a Spring application without Spring Boot.
 */
// tag::configuration[]
@Configuration
@EnableDistributedLocks
public class NoBootConfiguration {

	@Bean(initMethod = "start", destroyMethod = "close")
	CuratorFramework curator(@Value("${zk.connect-string}") String connectString) {
		return CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(1000, 3));
	}

	@Bean(destroyMethod = "close")
	CuratorLockRegistry lockRegistry(CuratorFramework curator) {
		return new CuratorLockRegistry(curator, "/locks", 10_000);
	}

	@Bean
	LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
		return new LockTemplate(lockRegistry, Duration.ofSeconds(5)); // the default wait time
	}

}
// end::configuration[]
