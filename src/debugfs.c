// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwlat_detector: the files in <debugfs>/hwlat_detector/.
 *
 * Writable files are 0600 and read-only ones 0400. Under kernel lockdown
 * debugfs refuses every file with a write bit, even for reading, but still
 * serves 0400 files: every result is a 0400 file, and the settings can come
 * from module parameters, which show them in sysfs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "hwlat.h"

static struct dentry *hwlat_dir;

/* Longest cpulist a write may carry. */
#define HWLAT_MAX_CPULIST_LEN	4096

/* The value files: one number each, read and (some) written. */
enum hwlat_value {
	HWLAT_V_ENABLE,
	HWLAT_V_THRESHOLD,
	HWLAT_V_WIDTH,
	HWLAT_V_WINDOW,
	HWLAT_V_COUNT,
	HWLAT_V_MAX,
	HWLAT_V_DROPPED,
	HWLAT_V_FLOOR,
};

static u64 hwlat_value_get(enum hwlat_value v)
{
	u64 val = 0;

	switch (v) {
	case HWLAT_V_ENABLE:
		return hwlat_is_enabled();
	case HWLAT_V_THRESHOLD:
		return hwlat_get_threshold_us();
	case HWLAT_V_WIDTH:
		return hwlat_get_width_us();
	case HWLAT_V_WINDOW:
		return hwlat_get_window_us();
	case HWLAT_V_COUNT:
		hwlat_buffer_stats(&val, NULL, NULL);
		return val;
	case HWLAT_V_MAX:
		hwlat_buffer_stats(NULL, &val, NULL);
		return val;
	case HWLAT_V_DROPPED:
		hwlat_buffer_stats(NULL, NULL, &val);
		return val;
	case HWLAT_V_FLOOR:
		return hwlat_get_floor_ns();
	}
	return 0;
}

static int hwlat_value_set(enum hwlat_value v, u64 val)
{
	switch (v) {
	case HWLAT_V_ENABLE:
		if (val > 1)
			return -EINVAL;
		return hwlat_set_enabled(val);
	case HWLAT_V_THRESHOLD:
		return hwlat_set_threshold_us(val);
	case HWLAT_V_WIDTH:
		return hwlat_set_width_us(val);
	case HWLAT_V_WINDOW:
		return hwlat_set_window_us(val);
	default:
		return -EPERM;
	}
}

static ssize_t hwlat_value_read(struct file *file, char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	enum hwlat_value v = (uintptr_t)file->private_data;
	char buf[24];
	int len;

	len = scnprintf(buf, sizeof(buf), "%llu\n", hwlat_value_get(v));
	return simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
}

static ssize_t hwlat_value_write(struct file *file, const char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	enum hwlat_value v = (uintptr_t)file->private_data;
	char buf[HWLAT_MAX_NUMBER_LEN + 1];
	u64 val;
	int ret;

	/* At most the number and one newline. */
	if (!cnt || cnt > sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	ret = hwlat_parse_u64(buf, cnt, &val);
	if (ret)
		return ret;
	ret = hwlat_value_set(v, val);
	if (ret)
		return ret;
	return cnt;
}

static const struct file_operations hwlat_value_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_value_read,
	.write = hwlat_value_write,
	.llseek = default_llseek,
};

/* mode: "none [round-robin] per-cpu stop-machine\n" */
static ssize_t hwlat_mode_read(struct file *file, char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	enum hwlat_mode cur = hwlat_get_mode();
	char buf[64];
	int len = 0;
	int m;

	for (m = 0; m < HWLAT_MODE_NR; m++)
		len += scnprintf(buf + len, sizeof(buf) - len,
				 m == cur ? "%s[%s]" : "%s%s",
				 m ? " " : "", hwlat_mode_names[m]);
	len += scnprintf(buf + len, sizeof(buf) - len, "\n");
	return simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
}

static ssize_t hwlat_mode_write(struct file *file, const char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	char buf[24];
	enum hwlat_mode m;
	int ret;

	if (!cnt || cnt >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	if (strlen(buf) != cnt)
		return -EINVAL;
	ret = hwlat_parse_mode(buf, &m);
	if (ret)
		return ret;
	ret = hwlat_set_mode(m);
	return ret ? ret : cnt;
}

static const struct file_operations hwlat_mode_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_mode_read,
	.write = hwlat_mode_write,
	.llseek = default_llseek,
};

static ssize_t hwlat_cpus_read(struct file *file, char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	cpumask_var_t mask;
	char *buf;
	ssize_t ret;
	int len;

	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	buf = kmalloc(HWLAT_MAX_CPULIST_LEN + 2, GFP_KERNEL);
	if (!buf) {
		free_cpumask_var(mask);
		return -ENOMEM;
	}
	hwlat_get_effective_cpus(mask);
	len = scnprintf(buf, HWLAT_MAX_CPULIST_LEN + 2, "%*pbl\n",
			cpumask_pr_args(mask));
	ret = simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
	kfree(buf);
	free_cpumask_var(mask);
	return ret;
}

/* A cpulist, or nothing (just a newline) for the default list: the housekeeping CPUs. */
static ssize_t hwlat_cpus_write(struct file *file, const char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	cpumask_var_t mask;
	char *buf;
	int ret;

	if (cnt > HWLAT_MAX_CPULIST_LEN)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	if (strlen(buf) != cnt) {
		ret = -EINVAL;
		goto out;
	}
	if (cnt && buf[cnt - 1] == '\n')
		buf[cnt - 1] = '\0';
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto out;
	}
	ret = *buf ? cpulist_parse(buf, mask) : 0;
	if (ret) {
		pr_info_ratelimited("cpus rejected: '%s' %s\n", buf,
				    ret == -ERANGE ? "names CPUs that do not exist" :
				    "is not a cpulist");
		ret = -EINVAL;
	} else {
		ret = hwlat_set_cpus(mask);
	}
	free_cpumask_var(mask);
out:
	kfree(buf);
	return ret ? ret : cnt;
}

static const struct file_operations hwlat_cpus_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_cpus_read,
	.write = hwlat_cpus_write,
	.llseek = default_llseek,
};

static ssize_t hwlat_clock_read(struct file *file, char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	static const char name[] = HWLAT_CLOCK_NAME "\n";

	return simple_read_from_buffer(ubuf, cnt, ppos, name,
				       sizeof(name) - 1);
}

/* "MSR_SMI_COUNT\n", or "unavailable: <reason>\n". */
static ssize_t hwlat_smi_file_read(struct file *file, char __user *ubuf,
				   size_t cnt, loff_t *ppos)
{
	char buf[128];
	int len;

	len = scnprintf(buf, sizeof(buf), "%s\n", hwlat_smi_status());
	return simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
}

static const struct file_operations hwlat_smi_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_smi_file_read,
	.llseek = default_llseek,
};

/* The nohz_full= and isolcpus= CPUs, a cpulist, "\n" when none. */
static ssize_t hwlat_excluded_read(struct file *file, char __user *ubuf,
				   size_t cnt, loff_t *ppos)
{
	char *buf;
	ssize_t ret;
	int len;

	buf = kmalloc(HWLAT_MAX_CPULIST_LEN + 2, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	len = scnprintf(buf, HWLAT_MAX_CPULIST_LEN + 2, "%*pbl\n",
			cpumask_pr_args(hwlat_cpus_excluded()));
	ret = simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
	kfree(buf);
	return ret;
}

static const struct file_operations hwlat_excluded_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_excluded_read,
	.llseek = default_llseek,
};

/*
 * The per-CPU totals: "<cpu> <value>\n" for each CPU whose value is not 0,
 * ascending. `sampled`: the ns of its kept widths (a kept width lasts at
 * least 1 us, so 0 is no width); `skipped`: the windows the samplers could
 * not get onto it in (sampler.c, hwlat_skip()). Both since enable=1. A
 * seq_file, so that one open reads one snapshot even through a small buffer.
 */
struct hwlat_per_cpu_file {
	u64 (*get)(unsigned int cpu);
};

static struct hwlat_per_cpu_file hwlat_sampled_file = { hwlat_get_sampled_ns };
static struct hwlat_per_cpu_file hwlat_skipped_file = { hwlat_get_skipped };

static int hwlat_per_cpu_show(struct seq_file *m, void *v)
{
	const struct hwlat_per_cpu_file *f = m->private;
	unsigned int cpu;
	u64 val;

	for_each_possible_cpu(cpu) {
		val = f->get(cpu);
		if (val)
			seq_printf(m, "%u %llu\n", cpu, val);
	}
	return 0;
}

static int hwlat_per_cpu_open(struct inode *inode, struct file *file)
{
	return single_open(file, hwlat_per_cpu_show, inode->i_private);
}

static const struct file_operations hwlat_per_cpu_fops = {
	.owner = THIS_MODULE,
	.open = hwlat_per_cpu_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static const struct file_operations hwlat_clock_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hwlat_clock_read,
	.llseek = default_llseek,
};

static int hwlat_sample_open(struct inode *inode, struct file *file)
{
	int ret = hwlat_buffer_sample_open();

	if (ret)
		return ret;
	return nonseekable_open(inode, file);
}

static int hwlat_sample_release(struct inode *inode, struct file *file)
{
	hwlat_buffer_sample_release();
	return 0;
}

static ssize_t hwlat_sample_read(struct file *file, char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	return hwlat_buffer_sample_read(ubuf, cnt,
					file->f_flags & O_NONBLOCK);
}

static __poll_t hwlat_sample_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	return hwlat_buffer_sample_poll(file, wait);
}

static const struct file_operations hwlat_sample_fops = {
	.owner = THIS_MODULE,
	.open = hwlat_sample_open,
	.release = hwlat_sample_release,
	.read = hwlat_sample_read,
	.poll = hwlat_sample_poll,
};

static int hwlat_stream_open(struct inode *inode, struct file *file)
{
	int ret = hwlat_buffer_stream_open();

	if (ret)
		return ret;
	return nonseekable_open(inode, file);
}

static int hwlat_stream_release(struct inode *inode, struct file *file)
{
	hwlat_buffer_stream_release();
	return 0;
}

static ssize_t hwlat_stream_read(struct file *file, char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	return hwlat_buffer_stream_read(ubuf, cnt,
					file->f_flags & O_NONBLOCK);
}

static __poll_t hwlat_stream_poll(struct file *file,
				  struct poll_table_struct *wait)
{
	return hwlat_buffer_stream_poll(file, wait);
}

static const struct file_operations hwlat_stream_fops = {
	.owner = THIS_MODULE,
	.open = hwlat_stream_open,
	.release = hwlat_stream_release,
	.read = hwlat_stream_read,
	.poll = hwlat_stream_poll,
};

struct hwlat_file {
	const char *name;
	umode_t mode;
	const struct file_operations *fops;
	enum hwlat_value value;
	struct hwlat_per_cpu_file *per_cpu;	/* the per-CPU totals files */
};

static const struct hwlat_file hwlat_files[] = {
	{ "enable", 0600, &hwlat_value_fops, HWLAT_V_ENABLE },
	{ "threshold", 0600, &hwlat_value_fops, HWLAT_V_THRESHOLD },
	{ "width", 0600, &hwlat_value_fops, HWLAT_V_WIDTH },
	{ "window", 0600, &hwlat_value_fops, HWLAT_V_WINDOW },
	{ "count", 0400, &hwlat_value_fops, HWLAT_V_COUNT },
	{ "max", 0400, &hwlat_value_fops, HWLAT_V_MAX },
	{ "dropped", 0400, &hwlat_value_fops, HWLAT_V_DROPPED },
	{ "floor", 0400, &hwlat_value_fops, HWLAT_V_FLOOR },
	{ "sample", 0400, &hwlat_sample_fops },
	{ "stream", 0400, &hwlat_stream_fops },
	{ "mode", 0600, &hwlat_mode_fops },
	{ "cpus", 0600, &hwlat_cpus_fops },
	{ "clock", 0400, &hwlat_clock_fops },
	{ "smi", 0400, &hwlat_smi_fops },
	{ "cpus_excluded", 0400, &hwlat_excluded_fops },
	{ "sampled", 0400, &hwlat_per_cpu_fops, .per_cpu = &hwlat_sampled_file },
	{ "skipped", 0400, &hwlat_per_cpu_fops, .per_cpu = &hwlat_skipped_file },
};

int hwlat_debugfs_init(void)
{
	struct dentry *d;
	size_t i;

	/* -ENODEV without CONFIG_DEBUG_FS, -EPERM with debugfs=off. */
	hwlat_dir = debugfs_create_dir(HWLAT_NAME, NULL);
	if (IS_ERR(hwlat_dir)) {
		d = hwlat_dir;
		hwlat_dir = NULL;
		return PTR_ERR(d);
	}
	for (i = 0; i < ARRAY_SIZE(hwlat_files); i++) {
		const struct hwlat_file *f = &hwlat_files[i];

		d = debugfs_create_file(f->name, f->mode, hwlat_dir,
					f->per_cpu ? (void *)f->per_cpu :
						     (void *)(uintptr_t)f->value,
					f->fops);
		if (IS_ERR(d)) {
			pr_err("cannot create debugfs file %s: %ld\n",
			       f->name, PTR_ERR(d));
			debugfs_remove_recursive(hwlat_dir);
			hwlat_dir = NULL;
			return PTR_ERR(d);
		}
	}
	return 0;
}

/* Waits until no file operation runs; later ones fail with -EIO. */
void hwlat_debugfs_exit(void)
{
	debugfs_remove_recursive(hwlat_dir);
	hwlat_dir = NULL;
}
