package io.github.zklock.autoconfigure;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.Leadership;
import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LeadershipRevokedEvent;
import io.github.zklock.curator.CuratorLeadership;

/**
 * The {@link Leadership} bean, unless the application defines one: a {@link CuratorLeadership}
 * on the lock client, electing below {@code zk.lock.root-path} + {@code zk.lock.leadership.key-prefix}
 * with {@code zk.lock.leadership.participant-id} (host name and process id by default). Its
 * changes are published as application events ({@link LeadershipGrantedEvent},
 * {@link LeadershipRevokedEvent}) and told to {@link LeadershipListener} beans. Groups are joined
 * by {@code @LeaderOnly} at start-up or on first use; all are left when the bean is destroyed,
 * which comes before the client it depends on is closed.
 */
@Configuration(proxyBeanMethods = false)
class ZkLockLeadershipConfiguration {

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(Leadership.class)
	CuratorLeadership zkLockLeadership(CuratorFramework client, ZkLockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LeadershipListener> listeners) {
		ZkLockProperties.Leadership leadership = properties.getLeadership();
		String participantId = (leadership.getParticipantId() != null) ? leadership.getParticipantId()
				: CuratorLeadership.defaultParticipantId();
		CuratorLeadership bean = new CuratorLeadership(client,
				ZKPaths.makePath(properties.getRootPath(), leadership.getKeyPrefix()), participantId);
		bean.addListener(new LeadershipListener() {

			@Override
			public void granted(LeadershipGrantedEvent event) {
				eventPublisher.publishEvent(event);
			}

			@Override
			public void revoked(LeadershipRevokedEvent event) {
				eventPublisher.publishEvent(event);
			}

		});
		listeners.orderedStream().forEach(bean::addListener);
		return bean;
	}

}
