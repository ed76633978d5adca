package rest

// Property names of the request schemas, as the document lists them:
// a property outside these is an error; one inside that Parity does not
// honour is a warning naming it.

func jobDescProps() map[string]bool {
	return setOf(
		"account", "account_gather_frequency", "admin_comment", "allocation_node_list", "allocation_node_port", "argv",
		"array", "batch_features", "begin_time", "flags", "burst_buffer", "clusters",
		"cluster_constraint", "comment", "contiguous", "container", "container_id", "core_specification",
		"thread_specification", "cpu_binding", "cpu_binding_flags", "cpu_frequency", "cpus_per_tres", "crontab",
		"deadline", "delay_boot", "dependency", "end_time", "environment", "rlimits",
		"excluded_nodes", "extra", "constraints", "group_id", "hetjob_group", "immediate",
		"job_id", "kill_on_node_fail", "licenses", "mail_type", "mail_user", "mcs_label",
		"memory_binding", "memory_binding_type", "memory_per_tres", "name", "network", "nice",
		"tasks", "oom_kill_step", "open_mode", "reserve_ports", "overcommit", "partition",
		"distribution_plane_size", "power_flags", "prefer", "hold", "priority", "profile",
		"qos", "reboot", "required_nodes", "requeue", "reservation", "script",
		"shared", "site_factor", "spank_environment", "step_id", "distribution", "time_limit",
		"time_minimum", "tres_bind", "tres_freq", "tres_per_job", "tres_per_node", "tres_per_socket",
		"tres_per_task", "user_id", "wait_all_nodes", "kill_warning_flags", "kill_warning_signal", "kill_warning_delay",
		"current_working_directory", "cpus_per_task", "minimum_cpus", "maximum_cpus", "nodes", "minimum_nodes",
		"maximum_nodes", "minimum_boards_per_node", "minimum_sockets_per_board", "sockets_per_node", "threads_per_core", "tasks_per_node",
		"tasks_per_socket", "tasks_per_core", "tasks_per_board", "ntasks_per_tres", "minimum_cpus_per_node", "memory_per_cpu",
		"memory_per_node", "temporary_disk_per_node", "selinux_context", "required_switches", "segment_size", "standard_error",
		"standard_input", "standard_output", "wait_for_switch", "wckey", "x11", "x11_magic_cookie",
		"x11_target_host", "x11_target_port",
	)
}

func updateNodeProps() map[string]bool {
	return setOf(
		"comment", "cpu_bind", "extra", "features", "features_act", "gres",
		"address", "hostname", "name", "state", "reason", "reason_uid",
		"resume_after", "topology_str", "weight",
	)
}

func submitReqProps() map[string]bool {
	return setOf(
		"script", "jobs", "job",
	)
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
