package io.github.zklock.aop;

import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

import io.github.zklock.Leadership;
import io.github.zklock.annotation.LeaderOnly;

/**
 * Joins every group named by a {@link LeaderOnly @LeaderOnly} method when the application
 * context starts (before scheduled tasks are started by the context-refreshed event), so that the
 * first call has had the time of the start-up to be elected. Leaving the groups is the
 * {@link Leadership} bean's own business when it is destroyed, before the ZooKeeper client it
 * depends on.
 */
public class LeaderGroupsLifecycle implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(LeaderGroupsLifecycle.class);

	private final LeaderOnlyOperationSource operationSource;

	private final ObjectProvider<Leadership> leadership;

	private volatile boolean running;

	/**
	 * Create the lifecycle.
	 * @param operationSource knows the groups of the validated methods
	 * @param leadership the leadership bean, if the application has one
	 */
	public LeaderGroupsLifecycle(LeaderOnlyOperationSource operationSource, ObjectProvider<Leadership> leadership) {
		this.operationSource = operationSource;
		this.leadership = leadership;
	}

	/**
	 * Join the groups.
	 * @throws IllegalStateException if a {@code @LeaderOnly} method exists but no
	 * {@link Leadership} bean does
	 */
	@Override
	public void start() {
		Set<String> groups = this.operationSource.getKnownGroups();
		if (!groups.isEmpty()) {
			Leadership leadership = this.leadership.getIfAvailable();
			if (leadership == null) {
				throw new IllegalStateException("@LeaderOnly methods name the groups " + groups + ", but the "
						+ "application has no " + Leadership.class.getName() + " bean. The Spring Boot starter defines "
						+ "one; without Spring Boot, define an io.github.zklock.curator.CuratorLeadership bean");
			}
			for (String group : groups) {
				// Joins the group: leadership is decided in the background.
				leadership.isLeader(group);
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Joined the leadership groups " + groups + " as '" + leadership.getParticipantId() + "'");
			}
		}
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
