package io.github.zklock.sample;

import java.util.Map;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.zklock.Leadership;

/**
 * Whether this instance leads a leadership group, and a way to make it give the leadership up:
 * {@code ./demo.sh --chaos} moves the leadership of {@code stock-report} to the instance it
 * freezes, so that a frozen leader resumes as a zombie.
 * <ul>
 * <li>{@code GET /api/leadership/{group}}: {@code {"group": "...", "leader": true|false}}; joins
 * the group if this instance has not yet;</li>
 * <li>{@code POST /api/leadership/{group}/yield}: gives the leadership up if this instance holds
 * it (the next participant leads), answers as the GET does.</li>
 * </ul>
 * An invalid group name answers 400.
 */
@RestController
@RequestMapping("/api/leadership")
public class LeadershipController {

	private final Leadership leadership;

	/**
	 * Create the controller.
	 * @param leadership the application's leadership
	 */
	public LeadershipController(Leadership leadership) {
		this.leadership = leadership;
	}

	/**
	 * Tell whether this instance leads the group.
	 * @param group the group name
	 * @return the group and whether this instance leads it
	 */
	@GetMapping("/{group}")
	public ResponseEntity<Map<String, Object>> leads(@PathVariable String group) {
		try {
			return ResponseEntity.ok(Map.of("group", group, "leader", this.leadership.isLeader(group)));
		}
		catch (IllegalArgumentException ex) {
			return ResponseEntity.badRequest().body(Map.of("group", group, "error", ex.getMessage()));
		}
	}

	/**
	 * Give the leadership of the group up, if this instance holds it.
	 * @param group the group name
	 * @return the group and whether this instance leads it now
	 */
	@PostMapping("/{group}/yield")
	public ResponseEntity<Map<String, Object>> yieldLeadership(@PathVariable String group) {
		try {
			this.leadership.yieldLeadership(group);
		}
		catch (IllegalArgumentException ex) {
			return ResponseEntity.badRequest().body(Map.of("group", group, "error", ex.getMessage()));
		}
		return leads(group);
	}

}
