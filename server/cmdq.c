/* Command queue and pose inbox: see cmdq.h. One mutex and one condition variable: the
 * queue sees a handful of commands per tick, so a broadcast that wakes every waiter (each
 * checks its own done flag) costs less than per-command condition variables. */
#include "cmdq.h"

#include <pthread.h>
#include <stdlib.h>

struct cmdq_t {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	cmd_t *head, *tail;
	int closed;
	pose_in_t *poses[2]; /* [fill] is being posted to; the other was taken by the sim */
	int npose, pose_cap, fill;
	bone_in_t *bones[2]; /* the poses' bones, alternating with poses[] */
	int nbone;
};

cmdq_t *cmdq_create(int pose_cap)
{
	cmdq_t *q = calloc(1, sizeof *q);
	if (!q)
		return NULL;
	q->pose_cap = pose_cap;
	q->poses[0] = malloc((size_t)pose_cap * sizeof(pose_in_t));
	q->poses[1] = malloc((size_t)pose_cap * sizeof(pose_in_t));
	q->bones[0] = malloc((size_t)CMDQ_BONE_CAP * sizeof(bone_in_t));
	q->bones[1] = malloc((size_t)CMDQ_BONE_CAP * sizeof(bone_in_t));
	if (!q->poses[0] || !q->poses[1] || !q->bones[0] || !q->bones[1]) {
		cmdq_destroy(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	return q;
}

void cmdq_destroy(cmdq_t *q)
{
	if (!q)
		return;
	if (q->poses[0] && q->poses[1] && q->bones[0] && q->bones[1]) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cv);
	}
	free(q->poses[0]);
	free(q->poses[1]);
	free(q->bones[0]);
	free(q->bones[1]);
	free(q);
}

/* Done: wakes its submitter, or frees a detached one. Under q->mu. */
static void finish(cmd_t *c)
{
	if (c->detached) {
		free(c->grab);
		free(c);
	} else
		c->done = 1;
}

void cmdq_push(cmdq_t *q, cmd_t *cmd)
{
	cmd->done = 0;
	cmd->next = NULL;
	pthread_mutex_lock(&q->mu);
	if (q->closed) {
		cmd->result = CMD_CLOSED;
		finish(cmd);
	} else {
		if (q->tail)
			q->tail->next = cmd;
		else
			q->head = cmd;
		q->tail = cmd;
	}
	pthread_mutex_unlock(&q->mu);
}

void cmdq_post_detached(cmdq_t *q, cmd_t *cmd)
{
	cmd->detached = 1;
	cmdq_push(q, cmd);
}

cmd_result_t cmdq_wait(cmdq_t *q, cmd_t *cmd)
{
	pthread_mutex_lock(&q->mu);
	while (!cmd->done)
		pthread_cond_wait(&q->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
	return cmd->result;
}

cmd_result_t cmdq_submit(cmdq_t *q, cmd_t *cmd)
{
	cmdq_push(q, cmd);
	return cmdq_wait(q, cmd);
}

int cmdq_post_pose(cmdq_t *q, const pose_in_t *p)
{
	int rc = 0;
	pthread_mutex_lock(&q->mu);
	if (q->closed)
		rc = -2;
	else if (q->npose >= q->pose_cap || q->nbone + p->nbones > CMDQ_BONE_CAP)
		rc = -1;
	else {
		pose_in_t *in = &q->poses[q->fill][q->npose++];
		*in = *p;
		bone_in_t *b = q->bones[q->fill] + q->nbone;
		for (int i = 0; i < p->nbones; i++)
			b[i] = p->bones[i];
		in->bones = p->nbones > 0 ? b : NULL;
		q->nbone += p->nbones;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

cmd_t *cmdq_take(cmdq_t *q)
{
	pthread_mutex_lock(&q->mu);
	cmd_t *list = q->head;
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->mu);
	return list;
}

void cmdq_take_poses(cmdq_t *q, const pose_in_t **out, int *n)
{
	pthread_mutex_lock(&q->mu);
	*out = q->poses[q->fill];
	*n = q->npose;
	q->fill ^= 1;
	q->npose = 0;
	q->nbone = 0;
	pthread_mutex_unlock(&q->mu);
}

void cmdq_complete(cmdq_t *q, cmd_t *list)
{
	if (!list)
		return;
	pthread_mutex_lock(&q->mu);
	while (list) {
		/* Read next before done: once done is set the submitter may return and the cmd
		 * (on its stack) is gone. */
		cmd_t *next = list->next;
		finish(list);
		list = next;
	}
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void cmdq_close(cmdq_t *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	for (cmd_t *c = q->head; c;) {
		cmd_t *next = c->next;
		c->result = CMD_CLOSED;
		finish(c);
		c = next;
	}
	q->head = q->tail = NULL;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
