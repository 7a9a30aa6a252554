package io.github.zklock.sample.security;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The passwords of the sample's two Actuator users, bound to {@code sample.security.*}, in plain
 * text: {@link ActuatorSecurityConfiguration} encodes them at start-up. The sample's
 * {@code application.yml} gives demo-only defaults; a deployment sets its own (for example through
 * the environment variables {@code SAMPLE_SECURITY_OPERATOR_PASSWORD} and
 * {@code SAMPLE_SECURITY_ADMIN_PASSWORD}).
 */
@ConfigurationProperties("sample.security")
public class SampleSecurityProperties {

	/**
	 * Password of the user "operator" (role OPERATOR: reads the zklocks endpoint and the health
	 * details).
	 */
	private @Nullable String operatorPassword;

	/**
	 * Password of the user "admin" (role ADMIN: also revokes locks and reads every other exposed
	 * endpoint).
	 */
	private @Nullable String adminPassword;

	public @Nullable String getOperatorPassword() {
		return this.operatorPassword;
	}

	public void setOperatorPassword(@Nullable String operatorPassword) {
		this.operatorPassword = operatorPassword;
	}

	public @Nullable String getAdminPassword() {
		return this.adminPassword;
	}

	public void setAdminPassword(@Nullable String adminPassword) {
		this.adminPassword = adminPassword;
	}

}
