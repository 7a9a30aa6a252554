package io.github.zklock.docs.family;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import io.github.zklock.integration.ZkLockRegistry;

/**
 * The guide's Spring Integration example: a leader initiator on zk-lock's lock registry.
 */
// tag::leader[]
@Configuration(proxyBeanMethods = false)
public class IntegrationConfiguration {

	@Bean
	LockRegistryLeaderInitiator leaderInitiator(ZkLockRegistry locks) {
		return new LockRegistryLeaderInitiator(locks);
	}

}
// end::leader[]
