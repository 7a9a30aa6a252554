package io.github.zklock;

/**
 * This instance became the leader of a group: it is first in the group's queue of participants
 * and its ZooKeeper connection is up. Published to {@link LeadershipListener}s and, in a Spring
 * application, as an application event ({@code @EventListener void on(LeadershipGrantedEvent event)}).
 * Each grant is followed by exactly one {@link LeadershipRevokedEvent} before the next grant of the
 * same group.
 *
 * @param group the group, one ZooKeeper path segment
 * @param participantId this instance's participant id (see {@link Leadership#getParticipantId()})
 */
public record LeadershipGrantedEvent(String group, String participantId) {

	@Override
	public String toString() {
		return "Leadership of group '" + this.group + "' granted to participant '" + this.participantId + "'";
	}

}
