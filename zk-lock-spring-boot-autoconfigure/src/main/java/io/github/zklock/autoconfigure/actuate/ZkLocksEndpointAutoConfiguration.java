package io.github.zklock.autoconfigure.actuate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.zklock.Leadership;
import io.github.zklock.actuate.ZkLocksEndpoint;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Auto-configuration of the read-only {@code zklocks} endpoint; expose it with
 * {@code management.endpoints.web.exposure.include=zklocks}.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(CuratorLockAdmin.class)
@ConditionalOnAvailableEndpoint(ZkLocksEndpoint.class)
public class ZkLocksEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ZkLocksEndpoint zkLocksEndpoint(CuratorLockAdmin admin, ObjectProvider<Leadership> leadership) {
		return new ZkLocksEndpoint(admin, leadership.getIfUnique());
	}

}
