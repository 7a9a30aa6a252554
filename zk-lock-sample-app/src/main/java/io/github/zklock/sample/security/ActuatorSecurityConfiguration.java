package io.github.zklock.sample.security;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.audit.InMemoryAuditEventRepository;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.util.matcher.RequestMatcher;
import org.springframework.util.Assert;

import io.github.zklock.actuate.ZkLocksEndpoint;

/**
 * Spring Security for the sample's Actuator endpoints, HTTP Basic and stateless:
 * <ul>
 * <li>{@code /actuator/health} and its groups: open, for probes; its details only for
 * authenticated users ({@code management.endpoint.health.show-details: when-authorized});</li>
 * <li>{@code GET /actuator/zklocks} and {@code GET /actuator/zklocks/{key}}: role OPERATOR or
 * ADMIN;</li>
 * <li>{@code DELETE /actuator/zklocks/{key}}, which revokes a lock: role ADMIN;</li>
 * <li>every other endpoint ({@code metrics}, {@code prometheus}, {@code auditevents}, the links page, any exposed
 * later): role ADMIN.</li>
 * </ul>
 * The filter chain applies to the Actuator's requests only: the sample's own endpoints (stock,
 * purchase, leadership, the {@code chaos} profile's) stay open, as the demo and the fault campaign
 * call them. Two users in memory, {@code operator} and {@code admin}, with the passwords of
 * {@link SampleSecurityProperties}. Each revocation is recorded by the {@code zklocks} endpoint as an
 * audit event ({@value ZkLocksEndpoint#LOCK_REVOKED}), kept in memory and shown to ADMIN at
 * {@code /actuator/auditevents}. Only in a servlet web application: without a web server (the
 * service tests) there is nothing to secure.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.SERVLET)
@EnableConfigurationProperties(SampleSecurityProperties.class)
public class ActuatorSecurityConfiguration {

	/** The role that reads the locks endpoint. */
	public static final String OPERATOR = "OPERATOR";

	/** The role that also revokes locks and reads every other Actuator endpoint. */
	public static final String ADMIN = "ADMIN";

	// tag::filter-chain[]
	@Bean
	SecurityFilterChain actuatorSecurity(HttpSecurity http) throws Exception {
		RequestMatcher revocation = EndpointRequest.to(ZkLocksEndpoint.class).withHttpMethod(HttpMethod.DELETE);
		http.securityMatcher(EndpointRequest.toAnyEndpoint())
			.authorizeHttpRequests((requests) -> requests
				.requestMatchers(EndpointRequest.to(HealthEndpoint.class)).permitAll()
				.requestMatchers(revocation).hasRole(ADMIN)
				.requestMatchers(EndpointRequest.to(ZkLocksEndpoint.class)).hasAnyRole(OPERATOR, ADMIN)
				.anyRequest().hasRole(ADMIN))
			.httpBasic(Customizer.withDefaults())
			.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
			// Operators revoke with curl or a script: HTTP Basic, no session, so no CSRF token to
			// send. A browser could add Basic credentials it caches for this origin to a forged
			// request, but a page of another origin cannot send a DELETE without a CORS pre-flight,
			// which the Actuator refuses (no management.endpoints.web.cors.*), and a form cannot
			// send one at all. Every other unsafe request to the Actuator keeps the CSRF check.
			.csrf((csrf) -> csrf.ignoringRequestMatchers(revocation));
		return http.build();
	}
	// end::filter-chain[]

	@Bean
	PasswordEncoder passwordEncoder() {
		return PasswordEncoderFactories.createDelegatingPasswordEncoder();
	}

	@Bean
	InMemoryUserDetailsManager actuatorUsers(SampleSecurityProperties properties, PasswordEncoder passwordEncoder) {
		return new InMemoryUserDetailsManager(
				User.withUsername("operator")
					.password(passwordEncoder.encode(required(properties.getOperatorPassword(), "operator-password")))
					.roles(OPERATOR)
					.build(),
				User.withUsername("admin")
					.password(passwordEncoder.encode(required(properties.getAdminPassword(), "admin-password")))
					.roles(ADMIN)
					.build());
	}

	/**
	 * The audit events of the application, the {@code zklocks} endpoint's revocations among them
	 * (with Spring Security's authentication and authorization events), in memory: the last 1000
	 * of this instance, lost on restart. A production application stores them durably.
	 * @return the repository
	 */
	@Bean
	InMemoryAuditEventRepository auditEventRepository() {
		return new InMemoryAuditEventRepository();
	}

	private static String required(@Nullable String password, String property) {
		Assert.hasText(password, () -> "sample.security." + property + " must be set");
		return password;
	}

}
