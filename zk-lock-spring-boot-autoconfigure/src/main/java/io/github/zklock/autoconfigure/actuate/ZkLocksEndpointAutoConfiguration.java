package io.github.zklock.autoconfigure.actuate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;

import io.github.zklock.Leadership;
import io.github.zklock.actuate.ZkLocksEndpoint;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;

/**
 * Auto-configuration of the {@code zklocks} endpoint; expose it with
 * {@code management.endpoints.web.exposure.include=zklocks}. Its revocations are published as
 * audit events through the application context, which Actuator's {@code AuditListener} records
 * when the application has an {@code AuditEventRepository}.
 */
@AutoConfiguration(after = ZkLockAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(CuratorLockAdmin.class)
@ConditionalOnAvailableEndpoint(ZkLocksEndpoint.class)
public class ZkLocksEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ZkLocksEndpoint zkLocksEndpoint(CuratorLockAdmin admin, ObjectProvider<Leadership> leadership,
			ApplicationEventPublisher events) {
		return new ZkLocksEndpoint(admin, leadership.getIfUnique(), events);
	}

}
